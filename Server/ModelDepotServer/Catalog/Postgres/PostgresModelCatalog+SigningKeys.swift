import Crypto
import Foundation
import Logging
import ModelDepotShared
import PostgresNIO

/// The online manifest keys in the shared catalog (table `signing_key`): every replica signs with
/// the active one, and `depot keys rotate` works whichever replica each of its requests reaches.
/// The database then holds a private key: keep its backups as safe as the storage directory's.
extension PostgresModelCatalog: SigningKeyStore {
    /// Serializes key changes across replicas (first key, pending key, activation).
    private static let signingKeysLock: Int64 = 0x6465_706F_74_02

    func loadKeys() async throws -> (active: Curve25519.Signing.PrivateKey, pending: Curve25519.Signing.PrivateKey?) {
        try await transaction { [logger] connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.signingKeysLock))", logger: logger)
            var keys = try await Self.signingKeys(connection, logger: logger)
            if keys.active == nil {
                let key = Curve25519.Signing.PrivateKey()
                try await Self.insert(key, role: "active", connection, logger: logger)
                keys.active = key
            }
            return (keys.active!, keys.pending)
        }
    }

    func addPendingKey(_ key: Curve25519.Signing.PrivateKey) async throws -> Curve25519.Signing.PrivateKey {
        try await transaction { [logger] connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.signingKeysLock))", logger: logger)
            if let pending = try await Self.signingKeys(connection, logger: logger).pending { return pending }
            try await Self.insert(key, role: "pending", connection, logger: logger)
            try await Self.announce(.signing, PublicSigningKey.keyID(of: key.publicKey), connection, logger: logger)
            return key
        }
    }

    func activateKey(_ keyid: String) async throws {
        try await transaction { [logger] connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.signingKeysLock))", logger: logger)
            try await connection.query("DELETE FROM signing_key WHERE keyid <> \(keyid)", logger: logger)
            try await connection.query("UPDATE signing_key SET role = 'active' WHERE keyid = \(keyid)", logger: logger)
            try await Self.announce(.signing, keyid, connection, logger: logger)
        }
    }

    func identifierSecret() async throws -> [UInt8] {
        try await run { [logger] connection in
            try await connection.query(
                "INSERT INTO identifier_secret (id, secret) VALUES (1, \(Data(IdentifierKey.newSecret()))) ON CONFLICT (id) DO NOTHING",
                logger: logger)
            guard
                let secret = try await connection.column("SELECT secret FROM identifier_secret WHERE id = 1", as: Data.self, logger: logger)
                    .first
            else {
                throw DepotError(.internalError, "The catalog's identifier_secret row is missing after it was made; check the database.")
            }
            return Array(secret)
        }
    }

    private static func signingKeys(_ connection: PostgresConnection, logger: Logger) async throws
        -> (active: Curve25519.Signing.PrivateKey?, pending: Curve25519.Signing.PrivateKey?)
    {
        var keys: (active: Curve25519.Signing.PrivateKey?, pending: Curve25519.Signing.PrivateKey?) = (nil, nil)
        let rows = try await connection.query("SELECT keyid, role, private_key FROM signing_key", logger: logger)
        for try await (keyid, role, raw) in rows.decode((String, String, Data).self) {
            let key: Curve25519.Signing.PrivateKey
            do {
                key = try Curve25519.Signing.PrivateKey(rawRepresentation: raw)
            } catch {
                throw DepotError(.internalError, "The catalog's signing key \(keyid) is damaged; restore the database from a backup.")
            }
            guard PublicSigningKey.keyID(of: key.publicKey) == keyid else {
                throw DepotError(
                    .internalError, "The catalog's signing key row \(keyid) holds another key; restore the database from a backup.")
            }
            if role == "active" { keys.active = key } else { keys.pending = key }
        }
        return keys
    }

    private static func insert(_ key: Curve25519.Signing.PrivateKey, role: String, _ connection: PostgresConnection, logger: Logger)
        async throws
    {
        try await connection.query(
            """
            INSERT INTO signing_key (keyid, role, private_key) VALUES (\(PublicSigningKey.keyID(of: key.publicKey)), \(role), \(key.rawRepresentation))
            """, logger: logger)
    }
}
