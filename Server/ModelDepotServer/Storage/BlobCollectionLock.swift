/// Keeps the collector from removing a blob an upload is naming: an upload holds it shared from
/// storing its blob until its version row is committed, the collector exclusively while it
/// re-reads the references and removes blobs. So a blob the collector removes is referenced by
/// no committed version and by no upload between those two steps (a later upload stores it
/// again). One lock per catalog: in process for SQLite, an advisory lock for PostgreSQL, which
/// also makes one replica at a time collect.
protocol BlobCollectionLock: Sendable {
    /// Runs `body` while no collector removes blobs (any number of uploads at once).
    func naming<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T
    /// Runs `body` as the only collector while no upload names a blob; `nil` without running it
    /// when `wait` is false and the lock is taken.
    func collecting<T: Sendable>(wait: Bool, _ body: @Sendable () async throws -> T) async throws -> T?
}

/// The lock for a catalog only this process uses.
actor LocalBlobCollectionLock: BlobCollectionLock {
    private var namers = 0
    private var collector = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func naming<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        while collector { await park() }
        namers += 1
        defer {
            namers -= 1
            wakeAll()
        }
        return try await body()
    }

    func collecting<T: Sendable>(wait: Bool, _ body: @Sendable () async throws -> T) async throws -> T? {
        while collector || namers > 0 {
            guard wait else { return nil }
            await park()
        }
        collector = true
        defer {
            collector = false
            wakeAll()
        }
        return try await body()
    }

    private func park() async {
        await withCheckedContinuation { waiting.append($0) }
    }

    private func wakeAll() {
        let woken = waiting
        waiting = []
        for continuation in woken { continuation.resume() }
    }
}
