import Foundation
import GRDB
import ModelDepotShared

extension SQLiteModelCatalog {
    public func nextManifestVersion(of name: ModelName) async throws -> Int {
        try await write { db in
            try db.execute(sql: "UPDATE model SET manifestVersion = manifestVersion + 1 WHERE name = ?", arguments: [name.rawValue])
            guard let version = try Int.fetchOne(db, sql: "SELECT manifestVersion FROM model WHERE name = ?", arguments: [name.rawValue]) else {
                throw DepotError(.notFound, "No model is named '\(name)'. List models with 'depot models list'.")
            }
            return version
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
