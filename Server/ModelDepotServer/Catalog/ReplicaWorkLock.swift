/// Makes one replica at a time do a kind of background work (review guarded rollouts and post
/// their webhooks; make patches): in process for SQLite, a PostgreSQL advisory lock per kind for
/// a shared catalog.
protocol ReplicaWorkLock: Sendable {
    /// Runs `body` as the only worker; `nil` without running it when `wait` is false and
    /// another worker holds the lock.
    func exclusively<T: Sendable>(wait: Bool, _ body: @Sendable () async throws -> T) async throws -> T?
}

/// The lock for a catalog only this process uses.
actor LocalReplicaWorkLock: ReplicaWorkLock {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func exclusively<T: Sendable>(wait: Bool, _ body: @Sendable () async throws -> T) async throws -> T? {
        while busy {
            guard wait else { return nil }
            await withCheckedContinuation { waiting.append($0) }
        }
        busy = true
        defer {
            busy = false
            if !waiting.isEmpty { waiting.removeFirst().resume() }
        }
        return try await body()
    }
}

/// One replica of a shared catalog at a time, per kind of work (advisory locks `depot` 04, 05).
struct PostgresReplicaWorkLock: ReplicaWorkLock {
    /// Reviewing guarded rollouts.
    static let guardReview: Int64 = 0x6465_706F_74_04
    /// Making patches.
    static let patchMaking: Int64 = 0x6465_706F_74_05

    let catalog: PostgresModelCatalog
    let key: Int64

    func exclusively<T: Sendable>(wait: Bool, _ body: @Sendable () async throws -> T) async throws -> T? {
        try await catalog.holdingAdvisoryLock(
            key, lock: wait ? "pg_advisory_lock" : "pg_try_advisory_lock", unlock: "pg_advisory_unlock", body)
    }
}
