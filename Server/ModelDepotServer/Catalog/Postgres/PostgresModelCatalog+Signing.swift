import Foundation
import Logging
import ModelDepotShared
import PostgresNIO

extension PostgresModelCatalog {
    public func manifestVersion(of name: ModelName, notBelow floor: Int) async throws -> Int {
        try await run { [logger] connection in
            _ = try await Self.modelID(name, connection, logger: logger)
            try await connection.query(
                """
                INSERT INTO manifest_sequence (name, last) VALUES (\(name.rawValue), \(max(floor, 1))) ON CONFLICT (name) DO NOTHING
                """, logger: logger)
            return try await connection.column(
                "SELECT last FROM manifest_sequence WHERE name = \(name.rawValue)", as: Int.self, logger: logger)[0]
        }
    }

    public func raiseManifestVersions(notBelow floor: Int) async throws {
        try await transaction { [logger] connection in
            let raised = try await connection.column(
                """
                INSERT INTO manifest_sequence (name, last) SELECT name, \(max(floor, 1)) FROM model
                ON CONFLICT (name) DO UPDATE SET last = excluded.last WHERE manifest_sequence.last < excluded.last
                RETURNING name
                """, as: String.self, logger: logger)
            for name in raised { try await Self.announce(.model, name, connection, logger: logger) }
        }
    }

    /// Raises the name's manifest version for a change made at `date`, and tells every replica
    /// the model changed (see ``announce(_:_:_:logger:)``).
    static func advanceManifestVersion(_ name: ModelName, at date: Date?, _ connection: PostgresConnection, logger: Logger) async throws {
        let floor = max(1, date.map { Int($0.timeIntervalSince1970 * 1000) } ?? 1)
        try await connection.query(
            """
            INSERT INTO manifest_sequence (name, last) VALUES (\(name.rawValue), \(floor))
            ON CONFLICT (name) DO UPDATE SET last = GREATEST(manifest_sequence.last + 1, excluded.last)
            """, logger: logger)
        try await announce(.model, name.rawValue, connection, logger: logger)
    }

    public func rootDocument(version: Int) async throws -> Data? {
        try await run { [logger] connection in
            try await connection.column("SELECT envelope FROM root_document WHERE version = \(version)", as: Data.self, logger: logger)
                .first
        }
    }

    public func latestRootDocument() async throws -> Data? {
        try await run { [logger] connection in
            try await connection.column("SELECT envelope FROM root_document ORDER BY version DESC LIMIT 1", as: Data.self, logger: logger)
                .first
        }
    }

    public func addRootDocument(version: Int, envelope: Data, at date: Date) async throws {
        let inserted = try await transaction { [logger] connection in
            let inserted = try await connection.column(
                """
                INSERT INTO root_document (version, envelope, created_at) VALUES (\(version), \(envelope), \(date))
                ON CONFLICT (version) DO NOTHING RETURNING version::bigint
                """, as: Int.self, logger: logger)
            if !inserted.isEmpty { try await Self.announce(.root, String(version), connection, logger: logger) }
            return inserted
        }
        guard !inserted.isEmpty else {
            throw CatalogRule.rootDocumentExists(version)
        }
    }
}
