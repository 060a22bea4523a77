import Foundation
import Logging
import ModelDepotShared
import ServiceLifecycle

/// Every hour, forgets outcome batch ids and hourly event counts older than a day past
/// ``OutcomeBatch/maximumAge``: a device never sends a batch again that late.
struct OutcomePruneService: Service {
    let catalog: any ModelCatalog
    let clock: @Sendable () -> Date
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            let hour = Int((clock().timeIntervalSince1970 - OutcomeBatch.maximumAge) / 3_600) - 24
            do {
                try await catalog.pruneOutcomeBatches(beforeHour: hour)
            } catch {
                logger.error("could not prune outcome batch ids; trying again in an hour", metadata: ["error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(3_600)) }
        }
    }
}
