/// Makes one replica at a time review guarded rollouts and post their webhooks: in process for
/// SQLite, a PostgreSQL advisory lock for a shared catalog.
protocol GuardReviewLock: Sendable {
    /// Runs `body` as the only reviewer; `nil` without running it when `wait` is false and
    /// another reviewer holds the lock.
    func reviewing<T: Sendable>(wait: Bool, _ body: @Sendable () async throws -> T) async throws -> T?
}

/// The lock for a catalog only this process uses.
actor LocalGuardReviewLock: GuardReviewLock {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func reviewing<T: Sendable>(wait: Bool, _ body: @Sendable () async throws -> T) async throws -> T? {
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

/// One replica of a shared catalog at a time (advisory lock `depot` 04).
struct PostgresGuardReviewLock: GuardReviewLock {
    static let key: Int64 = 0x6465_706F_74_04
    let catalog: PostgresModelCatalog

    func reviewing<T: Sendable>(wait: Bool, _ body: @Sendable () async throws -> T) async throws -> T? {
        try await catalog.holdingAdvisoryLock(Self.key, lock: wait ? "pg_advisory_lock" : "pg_try_advisory_lock", unlock: "pg_advisory_unlock", body)
    }
}
