import Crypto
import Foundation

/// A signed document: the exact payload bytes (base64) and Ed25519 signatures over them.
///
///     {"payload": "<base64>", "signatures": [{"keyid": "<hex>", "sig": "<base64>"}]}
///
/// Verifiers check signatures over the decoded bytes and only then parse them.
public struct SignedEnvelope: Sendable, Hashable, Codable {
    /// One signature.
    public struct Signature: Sendable, Hashable, Codable {
        /// The signing key's id.
        public var keyid: String
        /// The Ed25519 signature, base64.
        public var sig: String

        /// Creates a signature entry.
        public init(keyid: String, sig: String) {
            self.keyid = keyid
            self.sig = sig
        }
    }

    /// The signed bytes, base64.
    public var payload: String
    /// The signatures over the payload bytes.
    public var signatures: [Signature]

    /// Creates an envelope from parts (attackers' envelopes in tests are made this way too).
    public init(payload: String, signatures: [Signature]) {
        self.payload = payload
        self.signatures = signatures
    }

    /// Signs payload bytes with each key.
    public init(signing bytes: Data, with keys: [Curve25519.Signing.PrivateKey]) throws {
        payload = bytes.base64EncodedString()
        signatures = try keys.map { key in
            Signature(keyid: PublicSigningKey.keyID(of: key.publicKey), sig: try key.signature(for: bytes).base64EncodedString())
        }
    }

    /// Encodes a value as the payload and signs it.
    public init<Payload: Encodable>(signing value: Payload, with keys: [Curve25519.Signing.PrivateKey]) throws {
        try self.init(signing: try SignedJSON.encoder.encode(value), with: keys)
    }

    /// The envelope's JSON.
    public func encoded() throws -> Data { try SignedJSON.encoder.encode(self) }

    /// Reads an envelope of at most `limit` bytes.
    /// - Parameters:
    ///   - data: The envelope's JSON.
    ///   - limit: The largest envelope read.
    ///   - what: What the document is, for messages ("the manifest of 'flowers'").
    /// - Throws: ``DepotError``: `metadata_too_large`, `unsigned_manifest` (not an envelope, or no
    ///   signature), `invalid_metadata` (payload not base64).
    public static func decode(_ data: Data, limit: Int, what: String) throws(DepotError) -> (envelope: SignedEnvelope, payload: Data) {
        guard data.count <= limit else {
            throw DepotError(.metadataTooLarge, "\(what) is \(data.count) bytes; at most \(limit) are read.")
        }
        guard let envelope = try? JSONDecoder().decode(SignedEnvelope.self, from: data) else {
            throw DepotError(
                .unsignedManifest, "\(what) is not a signed envelope {\"payload\", \"signatures\"}; unsigned documents are refused.")
        }
        guard !envelope.signatures.isEmpty else {
            throw DepotError(.unsignedManifest, "\(what) carries no signature; unsigned documents are refused.")
        }
        guard let payload = Data(base64Encoded: envelope.payload) else {
            throw DepotError(.invalidMetadata, "The payload of \(what) is not base64.")
        }
        return (envelope, payload)
    }

    /// Checks that at least `threshold` distinct listed keys signed the payload.
    /// - Parameters:
    ///   - payload: The decoded payload bytes.
    ///   - keys: The keys allowed to sign.
    ///   - threshold: How many of them must have signed.
    ///   - revoked: Key ids that were revoked (reported as such rather than as unknown).
    ///   - what: What the document is, for messages.
    /// - Returns: The ids of the keys whose signatures verified.
    /// - Throws: ``DepotError``: `duplicate_signature`, `invalid_signature`, `revoked_signing_key`,
    ///   `unknown_signing_key`.
    @discardableResult
    public func verify(
        _ payload: Data, keys: [PublicSigningKey], threshold: Int, revoked: Set<String>,
        what: String
    ) throws(DepotError) -> Set<String> {
        var seen = Set<String>()
        for signature in signatures where !seen.insert(signature.keyid).inserted {
            throw DepotError(.duplicateSignature, "\(what) carries two signatures by key '\(signature.keyid)'; each key may sign once.")
        }
        let allowed = Dictionary(keys.map { ($0.keyid, $0) }, uniquingKeysWith: { first, _ in first })
        var valid = Set<String>()
        var failure: DepotError?
        for signature in signatures {
            if let listed = allowed[signature.keyid] {
                let key = try listed.key()
                if let sig = Data(base64Encoded: signature.sig), key.isValidSignature(sig, for: payload) {
                    valid.insert(signature.keyid)
                } else {
                    failure = DepotError(
                        .invalidSignature,
                        "The signature by key '\(signature.keyid)' on \(what) does not verify; the document was changed or forged.")
                }
            } else if revoked.contains(signature.keyid) {
                failure =
                    failure
                    ?? DepotError(.revokedSigningKey, "\(what) is signed by key '\(signature.keyid)', which the root document revoked.")
            } else {
                failure =
                    failure
                    ?? DepotError(
                        .unknownSigningKey, "\(what) is signed by key '\(signature.keyid)', which no trusted root document lists.")
            }
        }
        guard valid.count >= threshold else {
            throw failure ?? DepotError(.invalidSignature, "\(what) has \(valid.count) valid signatures; \(threshold) are needed.")
        }
        return valid
    }
}
