import GRDB
import GRDBSQLite

/// Binding values to a cached statement and running it through SQLite's C API, for the writes of
/// outcome batches: GRDB's `StatementArguments` (a boxed value each) cost as much as the insert.
/// Every parameter of the statement must be bound before each run; a run leaves the statement
/// reset for the next. A bind SQLite refuses throws, so that a run never goes with the value
/// bound before it.
extension Statement {
    func bind(_ value: Int64, at index: Int32) throws {
        try check(sqlite3_bind_int64(sqliteStatement, index, value))
    }

    func bind(_ value: Int, at index: Int32) throws {
        try check(sqlite3_bind_int64(sqliteStatement, index, Int64(value)))
    }

    func bind(_ value: Double, at index: Int32) throws {
        try check(sqlite3_bind_double(sqliteStatement, index, value))
    }

    /// Binds a copy of the text (`SQLITE_TRANSIENT`).
    func bind(_ value: String, at index: Int32) throws {
        try check(sqlite3_bind_text(sqliteStatement, index, value, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self)))
    }

    /// Runs a statement that returns no rows; throws SQLite's error as GRDB's `DatabaseError`.
    func run(_ db: Database) throws {
        let code = sqlite3_step(sqliteStatement)
        guard code == SQLITE_DONE else {
            let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
            sqlite3_reset(sqliteStatement)
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql)
        }
        sqlite3_reset(sqliteStatement)
    }

    private func check(_ code: Int32) throws {
        guard code != SQLITE_OK else { return }
        throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errstr(code)), sql: sql)
    }
}
