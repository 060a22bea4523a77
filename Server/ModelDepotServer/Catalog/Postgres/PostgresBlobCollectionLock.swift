import PostgresNIO

/// The blob collection lock of a shared catalog: a PostgreSQL advisory lock, shared by uploads,
/// exclusive for the one replica collecting. Each holder keeps one pooled connection for as long
/// as it holds the lock (advisory locks belong to a session).
struct PostgresBlobCollectionLock: BlobCollectionLock {
    static let key: Int64 = 0x6465_706F_74_03
    let catalog: PostgresModelCatalog

    func naming<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await holding(lock: "pg_advisory_lock_shared", unlock: "pg_advisory_unlock_shared", body)!
    }

    func collecting<T: Sendable>(wait: Bool, _ body: @Sendable () async throws -> T) async throws -> T? {
        try await holding(lock: wait ? "pg_advisory_lock" : "pg_try_advisory_lock", unlock: "pg_advisory_unlock", body)
    }

    private func holding<T: Sendable>(lock: String, unlock: String, _ body: @Sendable () async throws -> T) async throws -> T? {
        let logger = catalog.logger
        // Fails within the catalog's deadline when the database is out of reach, rather than
        // waiting for a pooled connection until the pool gives up.
        _ = try await catalog.run { [logger] connection in try await connection.query("SELECT 1", logger: logger) }
        do {
            return try await catalog.client.withConnection { connection -> T? in
                let taken = try await connection.column(PostgresQuery(unsafeSQL: "SELECT \(lock)(\(Self.key))::text"), as: String.self, logger: logger)
                guard taken.first != "false" else { return nil }
                do {
                    let result = try await body()
                    _ = try? await connection.query(PostgresQuery(unsafeSQL: "SELECT \(unlock)(\(Self.key))"), logger: logger)
                    return result
                } catch {
                    _ = try? await connection.query(PostgresQuery(unsafeSQL: "SELECT \(unlock)(\(Self.key))"), logger: logger)
                    throw error
                }
            }
        } catch {
            throw catalog.mapped(error)
        }
    }
}
