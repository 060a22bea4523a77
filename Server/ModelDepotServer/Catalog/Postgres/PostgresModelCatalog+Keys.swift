import Foundation
import Logging
import ModelDepotShared
import PostgresNIO

extension PostgresModelCatalog {
    /// The advisory lock that makes "is this the last admin token?" and its revocation one step
    /// across replicas.
    private static let adminKeysLock: Int64 = 0x6465_706F_74_01

    public func createKey(_ key: AccessKey, secretHash: [UInt8]) async throws {
        let models = try key.models.map { try Self.json($0.map(\.rawValue)) }
        let inserted = try await transaction { [logger] connection in
            let inserted = try await connection.column(
                """
                INSERT INTO access_key (id, kind, name, models, secret_hash, created_at, revoked_at)
                VALUES (\(key.id), \(key.kind.rawValue), \(key.name), \(models)::jsonb, \(Data(secretHash)), \(key.createdAt), \(key.revokedAt))
                ON CONFLICT (id) DO NOTHING RETURNING id
                """, as: String.self, logger: logger)
            if !inserted.isEmpty { try await Self.announce(.keys, key.id, connection, logger: logger) }
            return inserted
        }
        guard !inserted.isEmpty else { throw CatalogRule.keyExists(key.id) }
    }

    public func keys() async throws -> [AccessKey] {
        try await run { [logger] connection in
            try await Self.keys(where: "TRUE ORDER BY created_at, id", connection, logger: logger).map(\.key)
        }
    }

    public func key(id: String) async throws -> (key: AccessKey, secretHash: [UInt8])? {
        try await run { [logger] connection in
            try await Self.keys(where: "id = $1", binding: id, connection, logger: logger).first
        }
    }

    public func workingKeys() async throws -> [(key: AccessKey, secretHash: [UInt8])] {
        try await run { [logger] connection in try await Self.keys(where: "revoked_at IS NULL", connection, logger: logger) }
    }

    public func changeKey(id: String, _ change: @escaping @Sendable (_ key: AccessKey, _ workingAdminTokens: Int) throws -> AccessKey)
        async throws -> AccessKey
    {
        try await transaction { [logger] connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.adminKeysLock))", logger: logger)
            guard let found = try await Self.keys(where: "id = $1", binding: id, connection, logger: logger).first else {
                throw CatalogRule.noKey(id)
            }
            let working =
                try await connection.column(
                    "SELECT COUNT(*)::bigint FROM access_key WHERE kind = 'admin' AND revoked_at IS NULL", as: Int.self, logger: logger
                ).first ?? 0
            var key = found.key
            let changed = try change(key, working)
            guard changed.revokedAt != key.revokedAt else { return key }
            key.revokedAt = changed.revokedAt
            try await connection.query("UPDATE access_key SET revoked_at = \(key.revokedAt) WHERE id = \(id)", logger: logger)
            try await Self.announce(.keys, id, connection, logger: logger)
            return key
        }
    }

    /// The keys a condition selects (with `$1` bound to `binding`), with their secrets' hashes.
    private static func keys(
        where condition: String, binding: String? = nil, _ connection: PostgresConnection,
        logger: Logger
    ) async throws -> [(key: AccessKey, secretHash: [UInt8])] {
        var bindings = PostgresBindings()
        if let binding { bindings.append(binding) }
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT id, kind, name, models::text, secret_hash, created_at, revoked_at FROM access_key WHERE \(condition)
                    """, binds: bindings), logger: logger)
        var keys: [(key: AccessKey, secretHash: [UInt8])] = []
        for try await (id, kind, name, models, secretHash, createdAt, revokedAt)
            in rows.decode((String, String, String, String?, Data, Date, Date?).self)
        {
            let names = try models.map { try decoded([String].self, $0) }
            let key = AccessKey(
                id: id, kind: AccessKey.Kind(rawValue: kind) ?? .app, name: name,
                models: try names?.map { name throws(DepotError) in try ModelName(name) },
                createdAt: createdAt, revokedAt: revokedAt)
            keys.append((key, Array(secretHash)))
        }
        return keys
    }
}
