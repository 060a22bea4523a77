import Foundation
import Logging
import ModelDepotShared
import PostgresNIO

extension PostgresModelCatalog {
    public func publishedFiles() async throws -> [PublishedFile] {
        try await run { [logger] connection in
            let rows = try await connection.query(PostgresQuery(unsafeSQL: CatalogQueries.publishedFiles), logger: logger)
            var files: [PublishedFile] = []
            for try await (name, number, file, sha256, size) in rows.decode((String, Int, String, String, Int).self) {
                files.append(PublishedFile(model: try ModelName(name), version: number, file: file, sha256: sha256, size: size))
            }
            return files
        }
    }

    public func patches() async throws -> [StoredPatch] {
        try await run { [logger] connection in
            try await Self.patches(connection.query(Self.patchQuery(where: "true", PostgresBindings()), logger: logger))
        }
    }

    public func patches(to version: Int, of name: ModelName) async throws -> [StoredPatch] {
        try await run { [logger] connection in
            var bindings = PostgresBindings()
            bindings.append(name.rawValue)
            bindings.append(version)
            let query = Self.patchQuery(where: "model.name = $1 AND target.number = $2", bindings)
            return try await Self.patches(connection.query(query, logger: logger))
        }
    }

    public func addPatch(_ patch: StoredPatch) async throws -> Bool {
        try await transaction { [logger] connection in
            let inserted = try await connection.column(
                """
                INSERT INTO version_patch (version_id, from_version_id, file, from_sha256, sha256, size)
                SELECT target.id, source.id, \(patch.file), \(patch.fromSha256), \(patch.sha256), \(patch.size) FROM model
                    JOIN version AS target ON target.model_id = model.id AND target.number = \(patch.version)
                    JOIN version AS source ON source.model_id = model.id AND source.number = \(patch.fromVersion)
                    WHERE model.name = \(patch.model.rawValue)
                ON CONFLICT DO NOTHING RETURNING version_id
                """, as: Int64.self, logger: logger)
            guard !inserted.isEmpty else { return false }
            if patch.sha256 != nil { try await Self.advanceManifestVersion(patch.model, at: nil, connection, logger: logger) }
            return true
        }
    }

    /// The patches a condition selects (parameters bound by the caller), in a stable order.
    private static func patchQuery(where condition: String, _ bindings: PostgresBindings) -> PostgresQuery {
        PostgresQuery(
            unsafeSQL: """
                SELECT model.name, target.number, source.number, version_patch.file, version_patch.from_sha256, version_patch.sha256,
                    version_patch.size
                FROM version_patch JOIN version AS target ON target.id = version_patch.version_id
                    JOIN version AS source ON source.id = version_patch.from_version_id JOIN model ON model.id = target.model_id
                WHERE \(condition) ORDER BY model.name, target.number, source.number, version_patch.file
                """, binds: bindings)
    }

    private static func patches(_ rows: PostgresRowSequence) async throws -> [StoredPatch] {
        var patches: [StoredPatch] = []
        for try await (name, version, fromVersion, file, fromSha256, sha256, size) in rows.decode(
            (String, Int, Int, String, String, String?, Int).self)
        {
            patches.append(
                StoredPatch(
                    model: try ModelName(name), version: version, fromVersion: fromVersion, file: file, fromSha256: fromSha256,
                    sha256: sha256, size: size))
        }
        return patches
    }
}
