import Crypto
import ModelDepotShared

/// Where the online manifest keys and the ``IdentifierKey``'s secret live: files under the storage
/// directory for one server (``SigningKeyFiles``), the shared catalog for replicas
/// (``PostgresModelCatalog``), so that every replica signs with the same key, a rotation made
/// through one reaches all, and all store identifiers alike.
protocol SigningKeyStore: Sendable {
    /// The active key (made and stored on first use) and the pending one, if any.
    func loadKeys() async throws -> (active: Curve25519.Signing.PrivateKey, pending: Curve25519.Signing.PrivateKey?)
    /// Stores `key` as the pending key unless there is one already.
    /// - Returns: The pending key (`key`, or the one stored before).
    func addPendingKey(_ key: Curve25519.Signing.PrivateKey) async throws -> Curve25519.Signing.PrivateKey
    /// Makes the key `keyid` (the active or the pending one) active and forgets every other.
    func activateKey(_ keyid: String) async throws
    /// The ``IdentifierKey``'s secret, made and stored on first use (once, whichever replica asks first).
    func identifierSecret() async throws -> [UInt8]
}

extension SigningKeyFiles: SigningKeyStore {
    func loadKeys() async throws -> (active: Curve25519.Signing.PrivateKey, pending: Curve25519.Signing.PrivateKey?) {
        try load()
    }

    func addPendingKey(_ key: Curve25519.Signing.PrivateKey) async throws -> Curve25519.Signing.PrivateKey {
        let (active, pending) = try load()
        if let pending { return pending }
        try write(key)
        try save(State(active: PublicSigningKey.keyID(of: active.publicKey), pending: PublicSigningKey.keyID(of: key.publicKey)))
        return key
    }

    func activateKey(_ keyid: String) async throws {
        let (active, pending) = try load()
        try save(State(active: keyid, pending: nil))
        for key in [active, pending].compactMap({ $0 }) where PublicSigningKey.keyID(of: key.publicKey) != keyid {
            remove(PublicSigningKey.keyID(of: key.publicKey))
        }
    }

    func identifierSecret() async throws -> [UInt8] {
        try loadIdentifierSecret()
    }
}
