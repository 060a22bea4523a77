import Foundation
import Logging
import ModelDepotShared
import PostgresNIO

extension PostgresModelCatalog {
    public func rollout(of name: ModelName) async throws -> Rollout {
        try await run { [logger] connection in
            try await Self.rolloutDocument(model: try await Self.modelID(name, connection, logger: logger), connection, logger: logger)
        }
    }

    public func changeRollout(of name: ModelName, by keyID: String, at date: Date,
                              _ change: @escaping @Sendable (Rollout) throws -> Rollout) async throws -> Rollout {
        try await transaction { [logger] connection in
            let model = try await Self.lockModel(name, connection, logger: logger)
            let before = try await Self.rolloutDocument(model: model.id, connection, logger: logger)
            let after = try change(before)
            let published = Set(try await connection.column("SELECT number FROM version WHERE model_id = \(model.id) AND published", as: Int.self, logger: logger))
            try CatalogRule.checkPublished(after, of: name, published: published)
            guard after != before else { return after }
            let (beforeText, afterText) = (try Self.json(before), try Self.json(after))
            try await connection.query("""
                INSERT INTO rollout (model_id, document, updated_at) VALUES (\(model.id), \(afterText)::jsonb, \(date))
                ON CONFLICT (model_id) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at
                """, logger: logger)
            try await connection.query("""
                INSERT INTO rollout_change (model_id, key_id, at, before, after)
                VALUES (\(model.id), \(keyID), \(date), \(beforeText)::jsonb, \(afterText)::jsonb)
                """, logger: logger)
            try await Self.advanceManifestVersion(name, at: date, connection, logger: logger)
            return after
        }
    }

    public func rolloutHistory(of name: ModelName) async throws -> [RolloutChange] {
        try await run { [logger] connection in
            let id = try await Self.modelID(name, connection, logger: logger)
            let rows = try await connection.query("""
                SELECT key_id, at, before::text, after::text FROM rollout_change WHERE model_id = \(id) ORDER BY id
                """, logger: logger)
            var changes: [RolloutChange] = []
            for try await (keyID, at, before, after) in rows.decode((String, Date, String, String).self) {
                changes.append(RolloutChange(keyID: keyID, at: at, before: try Self.decoded(Rollout.self, before),
                                             after: try Self.decoded(Rollout.self, after)))
            }
            return changes
        }
    }

    static func rolloutDocument(model: Int64, _ connection: PostgresConnection, logger: Logger) async throws -> Rollout {
        let documents = try await connection.column("SELECT document::text FROM rollout WHERE model_id = \(model)", as: String.self, logger: logger)
        return try documents.first.map { try decoded(Rollout.self, $0) } ?? Rollout()
    }
}
