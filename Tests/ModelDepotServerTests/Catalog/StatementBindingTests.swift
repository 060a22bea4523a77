import GRDB
import Testing

@testable import ModelDepotServer

/// The outcome writes' binding through SQLite's C API: a refused bind throws (the run never goes
/// with the value bound before), and a failed run throws and leaves the statement usable.
@Suite struct StatementBindingTests {
    @Test func aRefusedBindThrowsAndAFailedRunLeavesTheStatementUsable() throws {
        let database = try DatabaseQueue()
        try database.write { db in
            try db.execute(sql: "CREATE TABLE row (id INTEGER PRIMARY KEY, name TEXT NOT NULL, size REAL NOT NULL)")
            let insert = try db.cachedStatement(sql: "INSERT INTO row (id, name, size) VALUES (?, ?, ?)")
            #expect(throws: DatabaseError.self, "there is no fourth parameter") { try insert.bind(1, at: 4) }
            try insert.bind(Int64(1), at: 1)
            try insert.bind("first", at: 2)
            try insert.bind(1.5, at: 3)
            try insert.run(db)
            #expect(throws: DatabaseError.self, "the same id again") { try insert.run(db) }
            try insert.bind(2, at: 1)
            try insert.bind("second", at: 2)
            try insert.run(db)
            #expect(try String.fetchAll(db, sql: "SELECT name FROM row ORDER BY id") == ["first", "second"])
            #expect(try Double.fetchAll(db, sql: "SELECT size FROM row ORDER BY id") == [1.5, 1.5], "a value not bound again stays bound")
        }
    }
}
