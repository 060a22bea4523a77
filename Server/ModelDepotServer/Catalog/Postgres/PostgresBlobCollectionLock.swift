/// The blob collection lock of a shared catalog: a PostgreSQL advisory lock, shared by uploads,
/// exclusive for the one replica collecting.
struct PostgresBlobCollectionLock: BlobCollectionLock {
    static let key: Int64 = 0x6465_706F_74_03
    let catalog: PostgresModelCatalog

    func naming<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await catalog.holdingAdvisoryLock(Self.key, lock: "pg_advisory_lock_shared", unlock: "pg_advisory_unlock_shared", body)!
    }

    func collecting<T: Sendable>(wait: Bool, _ body: @Sendable () async throws -> T) async throws -> T? {
        try await catalog.holdingAdvisoryLock(
            Self.key, lock: wait ? "pg_advisory_lock" : "pg_try_advisory_lock", unlock: "pg_advisory_unlock", body)
    }
}
