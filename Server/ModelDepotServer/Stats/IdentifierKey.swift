import Crypto
import Foundation
import ModelDepotShared

/// The deployment's key for what the catalog keeps of devices: installation ids and client
/// networks (``ClientNetwork``) are stored as SipHash-2-4 values under it.
///
/// So a copy of the database names neither (an installation id may be tied to a person; an
/// unkeyed hash of an IPv4 /24 is reversed by trying all 2^24), and no one without the key can
/// make an installation id whose value equals another installation's, to write into its outcome
/// rows. 32 random bytes made on first start and kept beside the online signing keys
/// (``SigningKeyStore``): `keys/identifiers.key` under the storage directory, the shared catalog
/// for replicas. Rotating the signing key leaves it as it is, so values stay comparable.
struct IdentifierKey: Sendable {
    static let secretLength = 32

    private let installations: SipHash
    private let networks: SipHash

    /// - Parameter secret: ``secretLength`` bytes; anything else is a damaged store.
    init(secret: [UInt8]) throws(DepotError) {
        guard secret.count == Self.secretLength else {
            throw DepotError(
                .internalError,
                "The stored identifier key has \(secret.count) bytes, not \(Self.secretLength); restore it from a backup.")
        }
        func derived(_ purpose: String) -> SipHash {
            let key = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: secret), info: Data("ModelDepot \(purpose) v1".utf8), outputByteCount: 16)
            return key.withUnsafeBytes { SipHash(key: Array($0)) }
        }
        installations = derived("installation id")
        networks = derived("client network")
    }

    /// A new random secret.
    static func newSecret() -> [UInt8] {
        SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
    }

    /// The value an installation id is stored as, of the id in lower case (as buckets read it).
    func installation(_ id: String) -> Int64 {
        Int64(bitPattern: installations.hash(InstallationID.lowercasedUTF8(id)))
    }

    /// The value a client network's prefix is stored as: 63 bits, never 0 (0 marks outcomes that
    /// guards and results do not read).
    func network(prefix: [UInt8]) -> Int64 {
        Int64(max(networks.hash(prefix) & 0x7FFF_FFFF_FFFF_FFFF, 1))
    }
}
