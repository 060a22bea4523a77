import Foundation
import GRDB
import ModelDepotShared

/// Console sessions in the `consoleSession` table.
extension SQLiteModelCatalog {
    public func addSession(_ session: StoredSession, removingStartedBefore startedBefore: Date, usedBefore: Date) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM consoleSession WHERE startedAt < ? OR usedAt < ?", arguments: [startedBefore, usedBefore])
            try db.execute(
                sql: "INSERT INTO consoleSession (id, keyId, startedAt, usedAt) VALUES (?, ?, ?, ?)",
                arguments: [session.id, session.keyID, session.startedAt, session.usedAt])
        }
    }

    public func session(id: String) async throws -> StoredSession? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT id, keyId, startedAt, usedAt FROM consoleSession WHERE id = ?", arguments: [id]).map {
                StoredSession(id: $0["id"], keyID: $0["keyId"], startedAt: $0["startedAt"], usedAt: $0["usedAt"])
            }
        }
    }

    public func touchSession(id: String, at date: Date) async throws {
        try await write { db in try db.execute(sql: "UPDATE consoleSession SET usedAt = ? WHERE id = ?", arguments: [date, id]) }
    }

    public func removeSession(id: String) async throws {
        try await write { db in try db.execute(sql: "DELETE FROM consoleSession WHERE id = ?", arguments: [id]) }
    }

    public func removeSessions(ofKey keyID: String) async throws {
        try await write { db in try db.execute(sql: "DELETE FROM consoleSession WHERE keyId = ?", arguments: [keyID]) }
    }
}
