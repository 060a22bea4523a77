import PostgresNIO

extension PostgresModelCatalog {
    /// Runs `body` holding advisory lock `key` (`lock`/`unlock` name the functions: shared or
    /// exclusive, waiting or trying); `nil` without running it when a trying `lock` found it taken.
    /// The holder keeps one pooled connection for as long as it holds the lock (advisory locks
    /// belong to a session).
    func holdingAdvisoryLock<T: Sendable>(
        _ key: Int64, lock: String, unlock: String,
        _ body: @Sendable () async throws -> T
    ) async throws -> T? {
        let logger = self.logger
        // Fails within the catalog's deadline when the database is out of reach, rather than
        // waiting for a pooled connection until the pool gives up.
        _ = try await run { [logger] connection in try await connection.query("SELECT 1", logger: logger) }
        do {
            return try await client.withConnection { connection -> T? in
                let taken = try await connection.column(
                    PostgresQuery(unsafeSQL: "SELECT \(lock)(\(key))::text"), as: String.self, logger: logger)
                guard taken.first != "false" else { return nil }
                do {
                    let result = try await body()
                    _ = try? await connection.query(PostgresQuery(unsafeSQL: "SELECT \(unlock)(\(key))"), logger: logger)
                    return result
                } catch {
                    _ = try? await connection.query(PostgresQuery(unsafeSQL: "SELECT \(unlock)(\(key))"), logger: logger)
                    throw error
                }
            }
        } catch {
            throw mapped(error)
        }
    }
}
