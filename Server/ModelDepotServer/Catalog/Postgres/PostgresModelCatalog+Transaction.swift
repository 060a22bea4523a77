import Foundation
import Logging
import ModelDepotShared
import PostgresNIO

extension PostgresModelCatalog {
    public func write<T: Sendable>(model name: ModelName, _ body: @escaping @Sendable (inout ModelTransaction) throws -> T) async throws
        -> (value: T, unreferenced: Set<String>)
    {
        try await transaction { [logger] connection in
            let model = try await Self.lockModel(name, connection, logger: logger)
            var transaction = ModelTransaction(
                name: name, lastVersionNumber: model.lastVersionNumber,
                versions: try await Self.versions(of: name, where: "model_id = \(model.id)", connection, logger: logger),
                rollout: try await Self.rolloutDocument(model: model.id, connection, logger: logger),
                guards: try await Self.guardDocument(model: model.id, connection, logger: logger),
                declaredMetrics: Set(
                    try await connection.column(
                        "SELECT name FROM experiment_metric WHERE model_id = \(model.id) AND declared", as: String.self, logger: logger)),
                undeclaredMetrics: Set(
                    try await connection.column(
                        "SELECT name FROM experiment_metric WHERE model_id = \(model.id) AND NOT declared", as: String.self, logger: logger)
                ))
            let value = try body(&transaction)
            var released: Set<String> = []
            for write in transaction.writes {
                released.formUnion(try await Self.apply(write, to: model.id, of: name, connection, logger: logger))
            }
            if let changed = transaction.manifestsChanged {
                try await Self.advanceManifestVersion(name, at: changed.at, connection, logger: logger)
            } else if transaction.writes.contains(.deleteModel) {
                try await Self.announce(.model, name.rawValue, connection, logger: logger)
            }
            return (value, try await Self.unreferenced(released, connection, logger: logger))
        }
    }

    /// Applies one write to the model's rows; returns the digests it released (of deleted rows).
    private static func apply(
        _ write: ModelTransaction.Write, to model: Int64, of name: ModelName, _ connection: PostgresConnection, logger: Logger
    ) async throws -> Set<String> {
        switch write {
        case .addVersion(let version):
            try await connection.query("UPDATE model SET last_version_number = \(version.version) WHERE id = \(model)", logger: logger)
            let id = try await connection.column(
                """
                INSERT INTO version (model_id, number, sha256, size, notes, published, created_at, published_at, tflite, uploaded_by)
                VALUES (\(model), \(version.version), \(version.sha256), \(version.size), \(version.notes), \(version.published),
                        \(version.createdAt), \(version.publishedAt), \(try json(version.tflite))::jsonb, \(version.uploadedBy))
                RETURNING id
                """, as: Int64.self, logger: logger)[0]
            try await insertFiles(version.files, version: id, connection, logger: logger)
            return []
        case .setPublished(let version):
            try await connection.query(
                """
                UPDATE version SET published = \(version.published), published_at = \(version.publishedAt)
                WHERE model_id = \(model) AND number = \(version.version)
                """, logger: logger)
            return []
        case .deleteVersion(let number):
            let released = try await connection.column(
                """
                SELECT version_file.sha256 FROM version_file JOIN version ON version.id = version_file.version_id
                WHERE version.model_id = \(model) AND version.number = \(number)
                UNION SELECT version_patch.sha256 FROM version_patch JOIN version
                    ON version.id = version_patch.version_id OR version.id = version_patch.from_version_id
                WHERE version.model_id = \(model) AND version.number = \(number) AND version_patch.sha256 IS NOT NULL
                """, as: String.self, logger: logger)
            let deleted = try await connection.column(
                "DELETE FROM version WHERE model_id = \(model) AND number = \(number) RETURNING sha256", as: String.self, logger: logger)
            guard !deleted.isEmpty else { throw CatalogRule.noVersion(number, of: name.rawValue) }
            return Set(released + deleted)
        case .deleteModel:
            let released = try await connection.column(
                """
                SELECT sha256 FROM version WHERE model_id = \(model)
                UNION SELECT version_file.sha256 FROM version_file JOIN version ON version.id = version_file.version_id
                WHERE version.model_id = \(model)
                UNION SELECT version_patch.sha256 FROM version_patch JOIN version ON version.id = version_patch.version_id
                WHERE version.model_id = \(model) AND version_patch.sha256 IS NOT NULL
                """, as: String.self, logger: logger)
            try await connection.query("DELETE FROM model WHERE id = \(model)", logger: logger)
            return Set(released)
        case .saveRollout(let change):
            let (before, after) = (try json(change.before), try json(change.after))
            try await connection.query(
                """
                INSERT INTO rollout (model_id, document, updated_at) VALUES (\(model), \(after)::jsonb, \(change.at))
                ON CONFLICT (model_id) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at
                """, logger: logger)
            try await connection.query(
                """
                INSERT INTO rollout_change (model_id, key_id, at, before, after, reason)
                VALUES (\(model), \(change.keyID), \(change.at), \(before)::jsonb, \(after)::jsonb, \(change.reason))
                """, logger: logger)
            return []
        case .saveGuards(let guards, let hasWork):
            try await connection.query(
                """
                INSERT INTO rollout_guard (model_id, document, has_work, running) VALUES (\(model), \(try json(guards))::jsonb, \(hasWork), \(hasWork))
                ON CONFLICT (model_id) DO UPDATE SET document = excluded.document, has_work = excluded.has_work, running = excluded.running
                """, logger: logger)
            return []
        case .declareMetric(let metric):
            try await connection.query(
                """
                INSERT INTO experiment_metric (model_id, name, kind, direction, tolerance, guardrail, cap, declared)
                VALUES (\(model), \(metric.name), \(metric.kind.rawValue), \(metric.direction.rawValue), \(metric.tolerance), \(metric.guardrail),
                        \(metric.cap?.description), true)
                ON CONFLICT (model_id, name) DO UPDATE SET kind = excluded.kind, direction = excluded.direction,
                    tolerance = excluded.tolerance, guardrail = excluded.guardrail, cap = excluded.cap, declared = true
                """, logger: logger)
            return []
        case .removeMetric(let metric):
            try await connection.query(
                "DELETE FROM experiment_metric WHERE model_id = \(model) AND name = \(metric)", logger: logger)
            return []
        }
    }
}
