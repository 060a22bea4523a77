import Crypto
import Foundation
import Logging
import ModelDepotShared
import PostgresNIO

extension PostgresModelCatalog {
    /// What an empty target holds; `depot migrate` refuses anything else.
    func contentsSummary() async throws -> String? {
        let counts = try await run { [logger] connection in
            try await connection.column(
                """
                SELECT (SELECT count(*) FROM model) || ' model(s), ' || (SELECT count(*) FROM access_key) || ' key(s), '
                    || (SELECT count(*) FROM root_document) || ' root document(s), ' || (SELECT count(*) FROM signing_key) || ' signing key(s)'
                    || CASE WHEN (SELECT count(*) FROM model) + (SELECT count(*) FROM access_key) + (SELECT count(*) FROM root_document)
                                 + (SELECT count(*) FROM signing_key) = 0 THEN '' ELSE '!' END
                """, as: String.self, logger: logger)
        }
        guard let summary = counts.first, summary.hasSuffix("!") else { return nil }
        return String(summary.dropLast())
    }

    /// Writes a whole snapshot, the online manifest keys and the identifier secret its
    /// installations and networks are stored under (``IdentifierKey``) in one transaction.
    func importSnapshot(
        _ snapshot: CatalogSnapshot, active: Curve25519.Signing.PrivateKey?, pending: Curve25519.Signing.PrivateKey?,
        identifierSecret: [UInt8]?
    ) async throws {
        try await transaction { [logger] connection in
            var ids: [String: Int64] = [:]
            func id(_ model: String) throws -> Int64 {
                guard let id = ids[model] else {
                    throw DepotError(
                        .internalError,
                        "The snapshot names model '\(model)', which it does not hold. Run 'depot fsck' on the source and try again.")
                }
                return id
            }
            for model in snapshot.models {
                ids[model.name] = try await connection.column(
                    """
                    INSERT INTO model (name, description, tags, created_at, last_version_number)
                    VALUES (\(model.name), \(model.description), \(try Self.json(model.tags))::jsonb, \(model.createdAt), \(model.lastVersionNumber))
                    RETURNING id
                    """, as: Int64.self, logger: logger)[0]
            }
            for version in snapshot.versions {
                let id = try await connection.column(
                    """
                    INSERT INTO version (model_id, number, sha256, size, notes, published, created_at, published_at, tflite, uploaded_by)
                    VALUES (\(try id(version.model)), \(version.number), \(version.sha256), \(version.size), \(version.notes), \(version.published),
                            \(version.createdAt), \(version.publishedAt), \(try Self.json(version.tflite))::jsonb, \(version.uploadedBy))
                    RETURNING id
                    """, as: Int64.self, logger: logger)[0]
                try await Self.insertFiles(version.files, version: id, connection, logger: logger)
            }
            for patch in snapshot.patches {
                try await connection.query(
                    """
                    INSERT INTO version_patch (version_id, from_version_id, file, from_sha256, sha256, size)
                    SELECT target.id, source.id, \(patch.file), \(patch.fromSha256), \(patch.sha256), \(patch.size)
                    FROM version AS target JOIN version AS source ON source.model_id = target.model_id AND source.number = \(patch.fromVersion)
                    WHERE target.model_id = \(try id(patch.model.rawValue)) AND target.number = \(patch.version)
                    """, logger: logger)
            }
            for entry in snapshot.keys {
                let models = try entry.key.models.map { try Self.json($0.map(\.rawValue)) }
                try await connection.query(
                    """
                    INSERT INTO access_key (id, kind, name, models, secret_hash, created_at, revoked_at)
                    VALUES (\(entry.key.id), \(entry.key.kind.rawValue), \(entry.key.name), \(models)::jsonb, \(Data(entry.secretHash)),
                            \(entry.key.createdAt), \(entry.key.revokedAt))
                    """, logger: logger)
            }
            for rollout in snapshot.rollouts {
                try await connection.query(
                    """
                    INSERT INTO rollout (model_id, document, updated_at) VALUES (\(try id(rollout.model)), \(try Self.json(rollout.document))::jsonb, \(rollout.updatedAt))
                    """, logger: logger)
            }
            for entry in snapshot.guards {
                try await connection.query(
                    """
                    INSERT INTO rollout_guard (model_id, document, has_work, running) VALUES (\(try id(entry.model)), \(try Self.json(entry.guards))::jsonb, \(entry.hasWork), \(entry.hasWork))
                    """, logger: logger)
            }
            for change in snapshot.changes {
                try await connection.query(
                    """
                    INSERT INTO rollout_change (model_id, key_id, at, before, after, reason)
                    VALUES (\(try id(change.model)), \(change.keyID), \(change.at), \(try Self.json(change.before))::jsonb, \(try Self.json(change.after))::jsonb,
                            \(change.reason))
                    """, logger: logger)
            }
            for row in snapshot.usage {
                try await connection.query(
                    """
                    INSERT INTO usage (model_id, version, arm, kind, minute, count)
                    VALUES (\(try id(row.model)), \(row.version), \(row.arm.stored), \(row.kind.rawValue), \(row.minute), \(row.count))
                    """, logger: logger)
            }
            for row in snapshot.installations {
                try await connection.query(
                    """
                    INSERT INTO arm_installation (model_id, arm, version, installation, minute)
                    VALUES (\(try id(row.model)), \(row.arm.stored), \(row.version), \(row.installation), \(row.minute))
                    """, logger: logger)
            }
            for row in snapshot.outcomes {
                try await connection.query(
                    """
                    INSERT INTO outcome (model_id, installation, metric, arm, version, hour, network, count, sum)
                    VALUES (\(try id(row.model)), \(row.row.installation), \(row.metric), \(row.arm), \(row.row.version), \(row.row.hour),
                            \(row.row.network), \(row.row.count), \(row.row.sum))
                    """, logger: logger)
            }
            for row in snapshot.exposures {
                try await connection.query(
                    """
                    INSERT INTO outcome_exposure (model_id, arm, version, installation, hour, network)
                    VALUES (\(try id(row.model)), \(row.arm), \(row.exposure.version), \(row.exposure.installation), \(row.exposure.hour),
                            \(row.exposure.network))
                    """, logger: logger)
            }
            for row in snapshot.batches {
                try await connection.query(
                    "INSERT INTO outcome_batch (model_id, id, hour) VALUES (\(try id(row.model)), \(row.id), \(row.hour))",
                    logger: logger)
            }
            for row in snapshot.metrics {
                let metric = row.metric.metric
                try await connection.query(
                    """
                    INSERT INTO experiment_metric (model_id, name, kind, direction, tolerance, guardrail, cap, declared)
                    VALUES (\(try id(row.model)), \(metric.name), \(metric.kind.rawValue), \(metric.direction.rawValue), \(metric.tolerance),
                            \(metric.guardrail), \(metric.cap?.description), \(row.metric.declared))
                    """, logger: logger)
            }
            for sequence in snapshot.sequences {
                try await connection.query(
                    "INSERT INTO manifest_sequence (name, last) VALUES (\(sequence.name), \(sequence.last))", logger: logger)
            }
            for root in snapshot.roots {
                try await connection.query(
                    "INSERT INTO root_document (version, envelope, created_at) VALUES (\(root.version), \(root.envelope), \(root.createdAt))",
                    logger: logger)
            }
            for (key, role) in [(active, "active"), (pending, "pending")] {
                guard let key else { continue }
                try await connection.query(
                    """
                    INSERT INTO signing_key (keyid, role, private_key) VALUES (\(PublicSigningKey.keyID(of: key.publicKey)), \(role), \(key.rawRepresentation))
                    """, logger: logger)
            }
            if let identifierSecret {
                try await connection.query(
                    """
                    INSERT INTO identifier_secret (id, secret) VALUES (1, \(Data(identifierSecret)))
                    ON CONFLICT (id) DO UPDATE SET secret = EXCLUDED.secret
                    """, logger: logger)
            }
        }
    }
}
