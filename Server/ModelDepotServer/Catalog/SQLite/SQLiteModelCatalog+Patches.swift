import Foundation
import GRDB
import ModelDepotShared

extension SQLiteModelCatalog {
    public func publishedFiles() async throws -> [PublishedFile] {
        try await read { db in
            try Row.fetchAll(db, sql: CatalogQueries.publishedFiles).map { row in
                PublishedFile(model: try ModelName(row[0] as String), version: row[1], file: row[2], sha256: row[3], size: row[4])
            }
        }
    }

    public func patches() async throws -> [StoredPatch] {
        try await read { db in try Self.patches(where: "1", arguments: [], db) }
    }

    public func patches(to version: Int, of name: ModelName) async throws -> [StoredPatch] {
        try await read { db in
            try Self.patches(
                where: "model.name = ? AND target.number = ?",
                arguments: [name.rawValue, version], db)
        }
    }

    public func addPatch(_ patch: StoredPatch) async throws -> Bool {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO version_patch (version_id, from_version_id, file, from_sha256, sha256, size)
                    SELECT target.id, source.id, ?, ?, ?, ? FROM model
                        JOIN version AS target ON target.model_id = model.id AND target.number = ?
                        JOIN version AS source ON source.model_id = model.id AND source.number = ?
                        WHERE model.name = ?
                    """,
                arguments: [patch.file, patch.fromSha256, patch.sha256, patch.size, patch.version, patch.fromVersion, patch.model.rawValue])
            guard db.changesCount == 1 else { return false }
            if patch.sha256 != nil { try Self.advanceManifestVersion(patch.model.rawValue, at: nil, db) }
            return true
        }
    }

    static func patches(where condition: String, arguments: StatementArguments, _ db: Database) throws -> [StoredPatch] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT model.name, target.number, source.number, version_patch.file, version_patch.from_sha256, version_patch.sha256, version_patch.size
                FROM version_patch JOIN version AS target ON target.id = version_patch.version_id
                    JOIN version AS source ON source.id = version_patch.from_version_id JOIN model ON model.id = target.model_id
                WHERE \(condition) ORDER BY model.name, target.number, source.number, version_patch.file
                """, arguments: arguments
        ).map { row in
            StoredPatch(
                model: try ModelName(row[0] as String), version: row[1], fromVersion: row[2], file: row[3], fromSha256: row[4],
                sha256: row[5], size: row[6])
        }
    }
}
