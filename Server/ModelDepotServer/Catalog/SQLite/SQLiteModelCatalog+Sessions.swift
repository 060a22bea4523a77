import Foundation
import GRDB
import ModelDepotShared

/// Console sessions in the `console_session` table.
extension SQLiteModelCatalog {
    public func addSession(_ session: StoredSession, removingStartedBefore startedBefore: Date, usedBefore: Date) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM console_session WHERE started_at < ? OR used_at < ?", arguments: [startedBefore, usedBefore])
            try db.execute(
                sql: "INSERT INTO console_session (id, key_id, started_at, used_at) VALUES (?, ?, ?, ?)",
                arguments: [session.id, session.keyID, session.startedAt, session.usedAt])
        }
    }

    public func session(id: String) async throws -> StoredSession? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT id, key_id, started_at, used_at FROM console_session WHERE id = ?", arguments: [id]).map {
                StoredSession(id: $0["id"], keyID: $0["key_id"], startedAt: $0["started_at"], usedAt: $0["used_at"])
            }
        }
    }

    public func touchSession(id: String, at date: Date) async throws {
        try await write { db in try db.execute(sql: "UPDATE console_session SET used_at = ? WHERE id = ?", arguments: [date, id]) }
    }

    public func removeSession(id: String) async throws {
        try await write { db in try db.execute(sql: "DELETE FROM console_session WHERE id = ?", arguments: [id]) }
    }

    public func removeSessions(ofKey keyID: String) async throws {
        try await write { db in try db.execute(sql: "DELETE FROM console_session WHERE key_id = ?", arguments: [keyID]) }
    }
}
