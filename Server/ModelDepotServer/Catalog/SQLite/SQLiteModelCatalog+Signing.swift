import Foundation
import GRDB
import ModelDepotShared

extension SQLiteModelCatalog {
    public func manifestVersion(of name: ModelName, notBelow floor: Int) async throws -> Int {
        try await write { db in
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM model WHERE name = ?", arguments: [name.rawValue]) != nil else {
                throw CatalogRule.noModel(name)
            }
            try db.execute(
                sql: "INSERT INTO manifest_sequence (name, last) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                arguments: [name.rawValue, max(floor, 1)])
            return try Int.fetchOne(db, sql: "SELECT last FROM manifest_sequence WHERE name = ?", arguments: [name.rawValue])!
        }
    }

    public func raiseManifestVersions(notBelow floor: Int) async throws {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO manifest_sequence (name, last) SELECT name, ? FROM model WHERE true
                    ON CONFLICT (name) DO UPDATE SET last = max(last, excluded.last)
                    """, arguments: [max(floor, 1)])
        }
    }

    /// Raises the name's manifest version for a change made at `date` (see
    /// ``ModelCatalog/manifestVersion(of:notBelow:)``).
    static func advanceManifestVersion(_ name: String, at date: Date?, _ db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO manifest_sequence (name, last) VALUES (?, ?)
                ON CONFLICT (name) DO UPDATE SET last = max(last + 1, excluded.last)
                """, arguments: [name, max(1, date.map { Int($0.timeIntervalSince1970 * 1000) } ?? 1)])
    }

    public func rootDocument(version: Int) async throws -> Data? {
        try await read { db in try Data.fetchOne(db, sql: "SELECT envelope FROM root_document WHERE version = ?", arguments: [version]) }
    }

    public func latestRootDocument() async throws -> Data? {
        try await read { db in try Data.fetchOne(db, sql: "SELECT envelope FROM root_document ORDER BY version DESC LIMIT 1") }
    }

    public func addRootDocument(version: Int, envelope: Data, at date: Date) async throws {
        try await write { db in
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM root_document WHERE version = ?", arguments: [version]) == nil else {
                throw CatalogRule.rootDocumentExists(version)
            }
            try db.execute(
                sql: "INSERT INTO root_document (version, envelope, created_at) VALUES (?, ?, ?)", arguments: [version, envelope, date])
        }
    }
}
