import Foundation
import Logging
import PostgresNIO

extension PostgresModelCatalog {
    static let changeChannel = "depot_change"

    /// Records a change in `change_event` and wakes every replica listening; both take effect
    /// when the transaction commits (a rolled-back change is never announced).
    static func announce(_ kind: CatalogChange.Kind, _ name: String, _ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("INSERT INTO change_event (kind, name) VALUES (\(kind.rawValue), \(name))", logger: logger)
        try await connection.query("SELECT pg_notify(\(changeChannel), '')", logger: logger)
    }

    /// The changes recorded in the last `seconds`, oldest first. A replica reads a window, not
    /// "everything after the last id it saw": a transaction can commit after a later one, and
    /// its change would otherwise be skipped.
    public func recentChanges(within seconds: Int = 60) async throws -> [CatalogChange] {
        try await run { [logger] connection in
            let rows = try await connection.query(
                """
                SELECT id, kind, name FROM change_event WHERE at > now() - make_interval(secs => \(seconds)) ORDER BY id
                """, logger: logger)
            var changes: [CatalogChange] = []
            for try await (id, kind, name) in rows.decode((Int64, String, String).self) {
                guard let kind = CatalogChange.Kind(rawValue: kind) else { continue }
                changes.append(CatalogChange(id: id, kind: kind, name: name))
            }
            return changes
        }
    }

    /// Calls `notified` whenever a replica announces a change, until the task is cancelled or the
    /// connection ends (then it throws, and the caller listens again).
    public func listenForChanges(_ notified: @escaping @Sendable () -> Void) async throws {
        do {
            try await client.withConnection { connection in
                try await connection.listen(on: Self.changeChannel) { notifications in
                    for try await _ in notifications { notified() }
                }
            }
        } catch {
            throw mapped(error)
        }
    }

    /// Deletes changes older than `seconds` (every replica has long applied them).
    public func pruneChanges(olderThan seconds: Int = 3_600) async throws {
        _ = try await run { [logger] connection in
            try await connection.query("DELETE FROM change_event WHERE at < now() - make_interval(secs => \(seconds))", logger: logger)
        }
    }
}
