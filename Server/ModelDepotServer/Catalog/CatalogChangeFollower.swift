import Logging
import ModelDepotShared
import ServiceLifecycle

/// Keeps this replica's caches in step with changes other replicas make to a shared
/// (PostgreSQL) catalog: woken by `NOTIFY` as soon as a change commits, and looking every
/// `pollInterval` regardless, so a lost notification or listening connection delays a change by
/// at most that long. Each look reads the last minute of changes and applies those not applied
/// yet; after the catalog was out of reach for longer than that, everything is reloaded.
struct CatalogChangeFollower: Service {
    let feed: any CatalogChangeFeed
    let caches: CatalogCaches
    let pollInterval: Duration
    let logger: Logger

    /// The changes each look reads (seconds); see ``CatalogChangeFeed/recentChanges(within:)``.
    static let window = 60

    func run() async throws {
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [feed, logger] in
                while !Task.isCancelled {
                    do {
                        try await feed.listenForChanges { wake.yield() }
                    } catch {
                        logger.warning(
                            "stopped listening for the other replicas' changes; looking every interval until listening again",
                            metadata: ["cause": "\(error)"])
                    }
                    try await Task.sleep(for: .seconds(1))
                }
            }
            group.addTask { [pollInterval] in
                while !Task.isCancelled {
                    try await Task.sleep(for: pollInterval)
                    wake.yield()
                }
            }
            // The first look applies the whole window: a change made while this replica was
            // starting may postdate what it loaded.
            var applied = Set<Int64>()
            var lastLook = ContinuousClock.now
            var lastPrune = ContinuousClock.now
            for await _ in wakes.cancelOnGracefulShutdown() {
                do {
                    let recent = try await feed.recentChanges(within: Self.window)
                    if ContinuousClock.now - lastLook < .seconds(Self.window - 10) {
                        let fresh = recent.filter { !applied.contains($0.id) }
                        if !fresh.isEmpty { await caches.apply(fresh) }
                    } else {
                        logger.notice("the catalog was out of reach for a while; reloading every cached answer")
                        await caches.reloadEverything()
                    }
                    applied = Set(recent.map(\.id))
                    lastLook = .now
                } catch {
                    logger.warning(
                        "could not read the other replicas' changes; cached answers stay until the catalog answers",
                        metadata: ["cause": "\(error)"])
                }
                if ContinuousClock.now - lastPrune > .seconds(600) {
                    try? await feed.pruneChanges(olderThan: 3_600)
                    lastPrune = .now
                }
            }
            group.cancelAll()
        }
    }
}
