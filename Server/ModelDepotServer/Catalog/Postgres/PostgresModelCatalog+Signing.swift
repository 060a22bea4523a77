import Foundation
import ModelDepotShared
import PostgresNIO

extension PostgresModelCatalog {
    public func nextManifestVersion(of name: ModelName, notBelow floor: Int) async throws -> Int {
        try await run { connection in
            _ = try await Self.modelID(name, connection, logger: logger)
            let versions = try await connection.column("""
                INSERT INTO manifest_sequence (name, last) VALUES (\(name.rawValue), \(max(floor, 1)))
                ON CONFLICT (name) DO UPDATE SET last = GREATEST(manifest_sequence.last + 1, excluded.last) RETURNING last::bigint
                """, as: Int.self, logger: logger)
            return versions[0]
        }
    }

    public func rootDocument(version: Int) async throws -> Data? {
        try await run { connection in
            try await connection.column("SELECT envelope FROM root_document WHERE version = \(version)", as: Data.self, logger: logger).first
        }
    }

    public func latestRootDocument() async throws -> Data? {
        try await run { connection in
            try await connection.column("SELECT envelope FROM root_document ORDER BY version DESC LIMIT 1", as: Data.self, logger: logger).first
        }
    }

    public func addRootDocument(version: Int, envelope: Data, at date: Date) async throws {
        let inserted = try await run { connection in
            try await connection.column("""
                INSERT INTO root_document (version, envelope, created_at) VALUES (\(version), \(envelope), \(date))
                ON CONFLICT (version) DO NOTHING RETURNING version::bigint
                """, as: Int.self, logger: logger)
        }
        guard !inserted.isEmpty else {
            throw DepotError(.conflict, "Root document v\(version) exists already; root documents are immutable. Publish v\(version + 1) with 'depot keys rotate'.")
        }
    }
}
