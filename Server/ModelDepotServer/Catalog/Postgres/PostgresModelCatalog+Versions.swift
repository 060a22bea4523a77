import Foundation
import Logging
import ModelDepotShared
import PostgresNIO

extension PostgresModelCatalog {
    public func addVersion(_ upload: VerifiedUpload, to name: ModelName, publish: Bool, at date: Date) async throws -> ModelVersion {
        let tflite = try Self.json(upload.tflite)
        return try await transaction { [logger] connection in
            let model = try await Self.lockModel(name, connection, logger: logger)
            let number = model.lastVersionNumber + 1
            try await connection.query("UPDATE model SET last_version_number = \(number) WHERE id = \(model.id)", logger: logger)
            let publishedAt: Date? = publish ? date : nil
            let id = try await connection.column(
                """
                INSERT INTO version (model_id, number, sha256, size, notes, published, created_at, published_at, tflite, uploaded_by)
                VALUES (\(model.id), \(number), \(upload.sha256), \(upload.size), \(upload.notes), \(publish), \(date), \(publishedAt), \(tflite)::jsonb,
                        \(upload.uploadedBy))
                RETURNING id
                """, as: Int64.self, logger: logger)[0]
            try await Self.insertFiles(upload.files, version: id, connection, logger: logger)
            try await Self.advanceManifestVersion(name, at: date, connection, logger: logger)
            return ModelVersion(
                model: name, version: number, sha256: upload.sha256, size: upload.size, notes: upload.notes,
                published: publish, createdAt: date, publishedAt: publishedAt, tflite: upload.tflite, files: upload.files,
                uploadedBy: upload.uploadedBy)
        }
    }

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

    public func setPublished(_ published: Bool, version number: Int, of name: ModelName, at date: Date) async throws -> ModelVersion {
        try await transaction { [logger] connection in
            let model = try await Self.lockModel(name, connection, logger: logger)
            guard
                var version = try await Self.versions(
                    of: name, where: "model_id = \(model.id) AND number = \(number)", connection,
                    logger: logger
                ).first
            else { throw CatalogRule.noVersion(number, of: name.rawValue) }
            if !published {
                try await Self.ensureNotInRollout(number, of: name, model: model.id, connection, logger: logger, doing: "unpublish")
            }
            guard version.published != published else { return version }
            version.published = published
            if published { version.publishedAt = date }
            try await connection.query(
                """
                UPDATE version SET published = \(published), published_at = \(version.publishedAt)
                WHERE model_id = \(model.id) AND number = \(number)
                """, logger: logger)
            try await Self.advanceManifestVersion(name, at: date, connection, logger: logger)
            return version
        }
    }

    public func deleteVersion(_ number: Int, of name: ModelName) async throws -> Set<String> {
        try await transaction { [logger] connection in
            let model = try await Self.lockModel(name, connection, logger: logger)
            try await Self.ensureNotInRollout(number, of: name, model: model.id, connection, logger: logger, doing: "delete")
            let files = try await connection.column(
                """
                SELECT version_file.sha256 FROM version_file JOIN version ON version.id = version_file.version_id
                WHERE version.model_id = \(model.id) AND version.number = \(number)
                """, as: String.self, logger: logger)
            let patches = try await connection.column(
                """
                SELECT version_patch.sha256 FROM version_patch JOIN version
                    ON version.id = version_patch.version_id OR version.id = version_patch.from_version_id
                WHERE version.model_id = \(model.id) AND version.number = \(number) AND version_patch.sha256 IS NOT NULL
                """, as: String.self, logger: logger)
            let deleted = try await connection.column(
                "DELETE FROM version WHERE model_id = \(model.id) AND number = \(number) RETURNING sha256", as: String.self, logger: logger)
            guard let digest = deleted.first else { throw CatalogRule.noVersion(number, of: name.rawValue) }
            try await Self.advanceManifestVersion(name, at: nil, connection, logger: logger)
            return try await Self.unreferenced(Set([digest] + files + patches), connection, logger: logger)
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
            let rows = try await connection.query(
                """
                SELECT DISTINCT version.sha256, version.size, model.name FROM version JOIN model ON model.id = version.model_id
                UNION SELECT DISTINCT version_file.sha256, version_file.size, model.name FROM version_file
                    JOIN version ON version.id = version_file.version_id JOIN model ON model.id = version.model_id
                UNION SELECT DISTINCT version_patch.sha256, version_patch.size, model.name FROM version_patch
                    JOIN version ON version.id = version_patch.version_id JOIN model ON model.id = version.model_id
                    WHERE version_patch.sha256 IS NOT NULL
                """, logger: logger)
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

    /// Refuses to take a version out of service while the rollout hands it out.
    static func ensureNotInRollout(
        _ number: Int, of name: ModelName, model: Int64, _ connection: PostgresConnection,
        logger: Logger, doing action: String
    ) async throws {
        try CatalogRule.checkNotInRollout(
            try await rolloutDocument(model: model, connection, logger: logger), version: number,
            of: name.rawValue, doing: action)
    }
}
