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

    public func changeRolloutAndGuards(
        of name: ModelName, by keyID: String, at date: Date,
        _ change: @escaping @Sendable (Rollout, [StoredRolloutGuard], _ published: Set<Int>) throws -> (Rollout, [StoredRolloutGuard])
    )
        async throws -> (rollout: Rollout, guards: [StoredRolloutGuard])
    {
        try await transaction { [logger] connection in
            let model = try await Self.lockModel(name, connection, logger: logger)
            let before = try await Self.rolloutDocument(model: model.id, connection, logger: logger)
            let guardsBefore = try await Self.guardDocument(model: model.id, connection, logger: logger)
            let published = Set(
                try await connection.column(
                    "SELECT number FROM version WHERE model_id = \(model.id) AND published", as: Int.self, logger: logger))
            let (after, guards) = try change(before, guardsBefore, published)
            try CatalogRule.checkPublished(after, of: name, published: published)
            if guards != guardsBefore {
                let running = guards.contains { $0.rolloutGuard.state == .running }
                try await connection.query(
                    """
                    INSERT INTO rollout_guard (model_id, document, running) VALUES (\(model.id), \(try Self.json(guards))::jsonb, \(running))
                    ON CONFLICT (model_id) DO UPDATE SET document = excluded.document, running = excluded.running
                    """, logger: logger)
            }
            guard after != before else { return (after, guards) }
            let (beforeText, afterText) = (try Self.json(before), try Self.json(after))
            try await connection.query(
                """
                INSERT INTO rollout (model_id, document, updated_at) VALUES (\(model.id), \(afterText)::jsonb, \(date))
                ON CONFLICT (model_id) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at
                """, logger: logger)
            let reason = StoredRolloutGuard.reasonOfNewMove(before: guardsBefore, after: guards)
            try await connection.query(
                """
                INSERT INTO rollout_change (model_id, key_id, at, before, after, reason)
                VALUES (\(model.id), \(keyID), \(date), \(beforeText)::jsonb, \(afterText)::jsonb, \(reason))
                """, logger: logger)
            try await Self.advanceManifestVersion(name, at: date, connection, logger: logger)
            return (after, guards)
        }
    }

    public func rolloutGuards(of name: ModelName) async throws -> [StoredRolloutGuard] {
        try await run { [logger] connection in
            try await Self.guardDocument(model: try await Self.modelID(name, connection, logger: logger), connection, logger: logger)
        }
    }

    public func modelsWithRunningGuards() async throws -> [ModelName] {
        try await run { [logger] connection in
            try await connection.column(
                """
                SELECT name FROM model JOIN rollout_guard ON rollout_guard.model_id = model.id WHERE running ORDER BY name
                """, as: String.self, logger: logger
            ).map { try ModelName($0) }
        }
    }

    public func rolloutHistory(of name: ModelName) async throws -> [RolloutChange] {
        try await run { [logger] connection in
            let id = try await Self.modelID(name, connection, logger: logger)
            let rows = try await connection.query(
                """
                SELECT key_id, at, before::text, after::text, reason FROM rollout_change WHERE model_id = \(id) ORDER BY id
                """, logger: logger)
            var changes: [RolloutChange] = []
            for try await (keyID, at, before, after, reason) in rows.decode((String, Date, String, String, String?).self) {
                changes.append(
                    RolloutChange(
                        keyID: keyID, at: at, before: try Self.decoded(Rollout.self, before),
                        after: try Self.decoded(Rollout.self, after), reason: reason))
            }
            return changes
        }
    }

    static func rolloutDocument(model: Int64, _ connection: PostgresConnection, logger: Logger) async throws -> Rollout {
        let documents = try await connection.column(
            "SELECT document::text FROM rollout WHERE model_id = \(model)", as: String.self, logger: logger)
        return try documents.first.map { try decoded(Rollout.self, $0) } ?? Rollout()
    }

    static func guardDocument(model: Int64, _ connection: PostgresConnection, logger: Logger) async throws -> [StoredRolloutGuard] {
        let documents = try await connection.column(
            "SELECT document::text FROM rollout_guard WHERE model_id = \(model)", as: String.self, logger: logger)
        return try documents.first.map { try decoded([StoredRolloutGuard].self, $0) } ?? []
    }
}
