import Foundation
import ModelDepotShared
import PostgresNIO

/// Console sessions in the `console_session` table, seen by every replica.
extension PostgresModelCatalog {
    public func addSession(_ session: StoredSession, removingStartedBefore startedBefore: Date, usedBefore: Date) async throws {
        try await transaction { [logger] connection in
            try await connection.query(
                "DELETE FROM console_session WHERE started_at < \(startedBefore) OR used_at < \(usedBefore)", logger: logger)
            try await connection.query(
                """
                INSERT INTO console_session (id, key_id, started_at, used_at)
                VALUES (\(session.id), \(session.keyID), \(session.startedAt), \(session.usedAt))
                """, logger: logger)
        }
    }

    public func session(id: String) async throws -> StoredSession? {
        try await run { [logger] connection in
            let rows = try await connection.query(
                "SELECT id, key_id, started_at, used_at FROM console_session WHERE id = \(id)", logger: logger)
            for try await (id, keyID, startedAt, usedAt) in rows.decode((String, String, Date, Date).self) {
                return StoredSession(id: id, keyID: keyID, startedAt: startedAt, usedAt: usedAt)
            }
            return nil
        }
    }

    public func touchSession(id: String, at date: Date) async throws {
        try await run { [logger] connection in
            _ = try await connection.query("UPDATE console_session SET used_at = \(date) WHERE id = \(id)", logger: logger)
        }
    }

    public func removeSession(id: String) async throws {
        try await run { [logger] connection in
            _ = try await connection.query("DELETE FROM console_session WHERE id = \(id)", logger: logger)
        }
    }

    public func removeSessions(ofKey keyID: String) async throws {
        try await run { [logger] connection in
            _ = try await connection.query("DELETE FROM console_session WHERE key_id = \(keyID)", logger: logger)
        }
    }
}
