import Foundation
import GRDB
import ModelDepotShared

extension SQLiteModelCatalog {
    public func nextManifestVersion(of name: ModelName, notBelow floor: Int) async throws -> Int {
        try await write { db in
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM model WHERE name = ?", arguments: [name.rawValue]) != nil else {
                throw DepotError(.notFound, "No model is named '\(name)'. List models with 'depot models list'.")
            }
            return try Int.fetchOne(db, sql: """
                INSERT INTO manifestSequence (name, last) VALUES (?, ?)
                ON CONFLICT (name) DO UPDATE SET last = max(last + 1, excluded.last) RETURNING last
                """, arguments: [name.rawValue, max(floor, 1)])!
        }
    }

    public func rootDocument(version: Int) async throws -> Data? {
        try await read { db in try Data.fetchOne(db, sql: "SELECT envelope FROM rootDocument WHERE version = ?", arguments: [version]) }
    }

    public func latestRootDocument() async throws -> Data? {
        try await read { db in try Data.fetchOne(db, sql: "SELECT envelope FROM rootDocument ORDER BY version DESC LIMIT 1") }
    }

    public func addRootDocument(version: Int, envelope: Data, at date: Date) async throws {
        try await write { db in
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM rootDocument WHERE version = ?", arguments: [version]) == nil else {
                throw DepotError(.conflict, "Root document v\(version) exists already; root documents are immutable. Publish v\(version + 1) with 'depot keys rotate'.")
            }
            try db.execute(sql: "INSERT INTO rootDocument (version, envelope, createdAt) VALUES (?, ?, ?)", arguments: [version, envelope, date])
        }
    }
}
