import Crypto
import Foundation

/// An Ed25519 public key as signed documents list it: its id (the SHA-256 of the raw 32-byte
/// key, in hex) and the key in base64.
public struct PublicSigningKey: Sendable, Hashable, Codable {
    /// The key's id: lower-case hex SHA-256 of the raw public key.
    public var keyid: String
    /// The raw 32-byte public key, base64.
    public var publicKey: String

    /// Describes a key.
    public init(_ key: Curve25519.Signing.PublicKey) {
        keyid = Self.keyID(of: key)
        publicKey = key.rawRepresentation.base64EncodedString()
    }

    /// Describes a key given as base64 of its raw 32 bytes (what `depot keys root generate` prints).
    /// - Throws: ``DepotError`` (`invalid_metadata`) when the text is not such a key.
    public init(publicKeyBase64 text: String) throws(DepotError) {
        guard let raw = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)),
            let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw)
        else {
            throw DepotError(
                .invalidMetadata, "'\(text.prefix(60))' is not a base64 Ed25519 public key; use what 'depot keys root generate' printed.")
        }
        self.init(key)
    }

    /// The id of a key.
    public static func keyID(of key: Curve25519.Signing.PublicKey) -> String {
        SHA256.hash(data: key.rawRepresentation).hex
    }

    /// The key itself, checked against its id.
    /// - Throws: ``DepotError`` (`invalid_metadata`) when the key is malformed or its id is not its hash.
    public func key() throws(DepotError) -> Curve25519.Signing.PublicKey {
        guard let raw = Data(base64Encoded: publicKey), let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw) else {
            throw DepotError(.invalidMetadata, "Key '\(keyid)' is not a base64 Ed25519 public key of 32 bytes.")
        }
        guard Self.keyID(of: key) == keyid else {
            throw DepotError(.invalidMetadata, "Key id '\(keyid)' is not the SHA-256 of its public key (\(Self.keyID(of: key))).")
        }
        return key
    }
}

extension Curve25519.Signing.PrivateKey {
    /// The key in the text form ModelDepot writes to key files: base64 of the raw 32 bytes and a newline.
    public var fileText: String { rawRepresentation.base64EncodedString() + "\n" }

    /// Reads a key written as ``fileText``.
    /// - Throws: ``DepotError`` (`bad_request`) naming the file.
    public init(fileText text: String, path: String) throws(DepotError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let raw = Data(base64Encoded: trimmed), let key = try? Self(rawRepresentation: raw) else {
            throw DepotError(
                .badRequest, "'\(path)' is not an Ed25519 private key file; create one with 'depot keys root generate --out FILE'.")
        }
        self = key
    }
}
