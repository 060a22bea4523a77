import Foundation
import Logging
import ModelDepotShared
import PostgresNIO

extension PostgresModelCatalog {
    public func versions(of name: ModelName) async throws -> [ModelVersion] {
        try await run { [logger] connection in
            let id = try await Self.modelID(name, connection, logger: logger)
            return try await Self.versions(of: name, where: "model_id = \(id) ORDER BY number DESC", connection, logger: logger)
        }
    }

    public func version(_ number: Int, of name: ModelName) async throws -> ModelVersion {
        try await run { [logger] connection in
            let id = try await Self.modelID(name, connection, logger: logger)
            guard
                let version = try await Self.versions(
                    of: name, where: "model_id = \(id) AND number = \(number)", connection, logger: logger
                ).first
            else { throw CatalogRule.noVersion(number, of: name.rawValue) }
            return version
        }
    }

    public func newestPublishedVersion(of name: ModelName) async throws -> ModelVersion? {
        try await run { [logger] connection in
            let id = try await Self.modelID(name, connection, logger: logger)
            return try await Self.versions(
                of: name, where: "model_id = \(id) AND published ORDER BY number DESC LIMIT 1", connection,
                logger: logger
            ).first
        }
    }

    public func blobReferences() async throws -> [BlobReference] {
        try await run { [logger] connection in
            var references: [String: BlobReference] = [:]
            let rows = try await connection.query(PostgresQuery(unsafeSQL: CatalogQueries.blobReferences), logger: logger)
            for try await (sha256, size, name) in rows.decode((String, Int, String).self) {
                references[sha256, default: BlobReference(sha256: sha256, size: size, models: [])].models.append(try ModelName(name))
            }
            return Array(references.values)
        }
    }

    /// The versions of `name` a condition on its `version` rows selects (numbers inlined by the
    /// callers, never text from a request).
    static func versions(
        of name: ModelName, where condition: String, _ connection: PostgresConnection,
        logger: Logger
    ) async throws -> [ModelVersion] {
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT number, sha256, size, notes, published, created_at, published_at, tflite::text, uploaded_by,
                        (SELECT coalesce(jsonb_agg(jsonb_build_object('name', name, 'sha256', sha256, 'size', size) ORDER BY position), '[]')::text
                         FROM version_file WHERE version_file.version_id = version.id)
                    FROM version WHERE \(condition)
                    """), logger: logger)
        var versions: [ModelVersion] = []
        for try await (number, sha256, size, notes, published, createdAt, publishedAt, tflite, uploadedBy, files)
            in rows.decode((Int, String, Int, String, Bool, Date, Date?, String, String?, String).self)
        {
            versions.append(
                ModelVersion(
                    model: name, version: number, sha256: sha256, size: size, notes: notes, published: published,
                    createdAt: createdAt, publishedAt: publishedAt,
                    tflite: try decoded(TFLiteModelDescription.self, tflite),
                    files: try decoded([CompanionFile].self, files), uploadedBy: uploadedBy))
        }
        return versions
    }

    /// Adds a version's companion files, in order.
    static func insertFiles(_ files: [CompanionFile], version: Int64, _ connection: PostgresConnection, logger: Logger) async throws {
        for (position, file) in files.enumerated() {
            try await connection.query(
                """
                INSERT INTO version_file (version_id, name, sha256, size, position)
                VALUES (\(version), \(file.name), \(file.sha256), \(file.size), \(position))
                """, logger: logger)
        }
    }
}
