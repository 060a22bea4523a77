import Foundation
import Logging
import ModelDepotRollouts
import ModelDepotShared
import PostgresNIO

extension PostgresModelCatalog {
    public func rollout(of name: ModelName) async throws -> Rollout {
        try await run { [logger] connection in
            try await Self.rolloutDocument(model: try await Self.modelID(name, connection, logger: logger), connection, logger: logger)
        }
    }

    public func rolloutGuards(of name: ModelName) async throws -> [StoredRolloutGuard] {
        try await run { [logger] connection in
            try await Self.guardDocument(model: try await Self.modelID(name, connection, logger: logger), connection, logger: logger)
        }
    }

    public func modelsWithGuardWork() async throws -> [ModelName] {
        try await run { [logger] connection in
            try await connection.column(
                """
                SELECT name FROM model JOIN rollout_guard ON rollout_guard.model_id = model.id WHERE has_work OR running ORDER BY name
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
