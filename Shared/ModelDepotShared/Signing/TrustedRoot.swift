import Foundation

/// A root document whose signatures were checked, with the exact envelope bytes it came in.
/// The chain starts from what the app pins and advances one version at a time.
public struct TrustedRoot: Sendable, Hashable {
    /// The largest root document read (512 KiB).
    public static let maximumSize = 512 << 10

    /// The document.
    public let document: RootDocument
    /// The envelope it was read from, to store and serve as is.
    public let envelope: Data

    /// Reads a first trusted root: a document signed by its own root keys. With `pinnedKey`, that
    /// key must be one of the document's root keys and one of its signers.
    /// - Throws: ``DepotError``: `metadata_too_large`, `unsigned_manifest`, `invalid_metadata`,
    ///   `untrusted_root`.
    public init(first data: Data, pinnedKey: PublicSigningKey? = nil) throws(DepotError) {
        let (envelope, payload) = try Self.decode(data, what: "The root document")
        let document = try Self.document(payload)
        if let pinnedKey {
            guard document.rootKeys.contains(pinnedKey),
                (try? envelope.verify(payload, keys: [pinnedKey], threshold: 1, revoked: [], what: "")) != nil
            else {
                throw DepotError(
                    .untrustedRoot, "Root document v\(document.version) is not signed by the pinned root key '\(pinnedKey.keyid)'.")
            }
        }
        try Self.verify(
            envelope, payload, keys: document.rootKeys, threshold: document.rootThreshold,
            what: "root document v\(document.version)", by: "its own root keys")
        self.document = document
        self.envelope = data
    }

    /// Reads root document N+1: it must have version N+1 and be signed by the root keys of both
    /// this document and itself (`rootThreshold` of each).
    /// - Throws: ``DepotError``: `untrusted_root` (version or signatures), and the errors of `init(first:)`.
    public func successor(_ data: Data) throws(DepotError) -> TrustedRoot {
        let (envelope, payload) = try Self.decode(data, what: "Root document v\(document.version + 1)")
        let next = try Self.document(payload)
        guard next.version == document.version + 1 else {
            throw DepotError(
                .untrustedRoot,
                "The root document after v\(document.version) says it is v\(next.version); only v\(document.version + 1) can follow.")
        }
        try Self.verify(
            envelope, payload, keys: document.rootKeys, threshold: document.rootThreshold,
            what: "root document v\(next.version)", by: "the root keys of v\(document.version)")
        try Self.verify(
            envelope, payload, keys: next.rootKeys, threshold: next.rootThreshold,
            what: "root document v\(next.version)", by: "its own root keys")
        return TrustedRoot(document: next, envelope: data)
    }

    private init(document: RootDocument, envelope: Data) {
        self.document = document
        self.envelope = envelope
    }

    /// Verifies a signed manifest for `model` with this root's manifest keys.
    /// - Parameters:
    ///   - data: The envelope as the server sent it.
    ///   - model: The model asked for.
    ///   - now: The device's clock.
    ///   - clockSkew: How far the device's clock may run ahead of the signer's.
    ///   - minimumVersion: The highest manifest version accepted before for the model.
    /// - Returns: The manifest and the keys whose signatures verified.
    /// - Throws: ``DepotError``: the envelope and signature errors, `invalid_metadata`,
    ///   `manifest_mismatch`, `manifest_rollback`, `manifest_expired`, `root_expired`.
    public func verifyManifest(
        _ data: Data, for model: ModelName, now: Date, clockSkew: TimeInterval,
        minimumVersion: Int?
    ) throws(DepotError) -> VerifiedManifest {
        let what = "The manifest of '\(model)'"
        guard document.expires.addingTimeInterval(clockSkew) > now else {
            throw DepotError(
                .rootExpired,
                "Root document v\(document.version) expired at \(document.expires); no manifest is trusted until the key owner publishes v\(document.version + 1) ('depot keys rotate')."
            )
        }
        let (envelope, payload) = try SignedEnvelope.decode(data, limit: ModelManifest.maximumSize, what: what)
        let signers = try envelope.verify(
            payload, keys: document.manifestKeys, threshold: document.manifestThreshold,
            revoked: Set(document.revokedKeys), what: what)
        guard let manifest = try? SignedJSON.decoder.decode(ModelManifest.self, from: payload), manifest.type == "manifest" else {
            throw DepotError(.invalidMetadata, "\(what) is signed but its payload is not a manifest.")
        }
        guard manifest.sha256.isSHA256Hex, manifest.size > 0, manifest.size <= 1 << 40 else {
            throw DepotError(
                .invalidMetadata,
                "\(what) is signed but names an impossible file (SHA-256 '\(manifest.sha256.prefix(70))', \(manifest.size) bytes).")
        }
        // The SDK names files and paths after these digests: each is hex before any is used.
        let patches = manifest.patches + manifest.files.flatMap(\.patches)
        let digests = manifest.files.map(\.sha256) + patches.flatMap { [$0.sha256, $0.from] }
        if let bad = digests.first(where: { !$0.isSHA256Hex }) {
            throw DepotError(
                .invalidMetadata, "\(what) is signed but names a file by '\(bad.prefix(70))', which is not a SHA-256 in lower-case hex.")
        }
        // The SDK adds and subtracts these sizes: each is one a file can have.
        if let bad = (manifest.files.map(\.size) + patches.map(\.size)).first(where: { !(0...(1 << 40)).contains($0) }) {
            throw DepotError(
                .invalidMetadata, "\(what) is signed but gives a companion file or a patch \(bad) bytes; a file has 0 to 1099511627776.")
        }
        guard manifest.model == model else {
            throw DepotError(.manifestMismatch, "The server answered a manifest for '\(manifest.model)' when '\(model)' was asked for.")
        }
        if let minimumVersion, manifest.manifestVersion < minimumVersion {
            throw DepotError(
                .manifestRollback,
                "\(what) has manifest version \(manifest.manifestVersion), older than version \(minimumVersion) accepted before: an old manifest was replayed."
            )
        }
        guard manifest.expires.addingTimeInterval(clockSkew) > now else {
            throw DepotError(
                .manifestExpired,
                "\(what) expired at \(manifest.expires) (manifest version \(manifest.manifestVersion)): the server stopped refreshing it, or its answer is being replayed."
            )
        }
        return VerifiedManifest(manifest: manifest, signers: signers)
    }

    /// Whether every key in `signers` is still a manifest key of this root and not revoked: when
    /// not, what those keys vouched for (a device's manifest-version floor) is no longer trusted.
    /// - Parameter signers: Key ids that signed a manifest under an earlier root.
    public func stillVouchesFor(_ signers: Set<String>) -> Bool {
        let listed = Set(document.manifestKeys.map(\.keyid)).subtracting(document.revokedKeys)
        return signers.isSubset(of: listed)
    }

    /// The envelope of a root document; one without signatures is an untrusted root.
    private static func decode(_ data: Data, what: String) throws(DepotError) -> (envelope: SignedEnvelope, payload: Data) {
        do {
            return try SignedEnvelope.decode(data, limit: maximumSize, what: what)
        } catch  where error.code == .unsignedManifest {
            throw DepotError(.untrustedRoot, error.message)
        }
    }

    private static func document(_ payload: Data) throws(DepotError) -> RootDocument {
        guard let document = try? SignedJSON.decoder.decode(RootDocument.self, from: payload) else {
            throw DepotError(.invalidMetadata, "The root document's payload is not a root document.")
        }
        try document.validate()
        return document
    }

    private static func verify(
        _ envelope: SignedEnvelope, _ payload: Data, keys: [PublicSigningKey], threshold: Int,
        what: String, by signers: String
    ) throws(DepotError) {
        do {
            try envelope.verify(payload, keys: keys, threshold: threshold, revoked: [], what: what)
        } catch {
            if error.code == .duplicateSignature { throw error }
            throw DepotError(
                .untrustedRoot,
                "\(what.prefix(1).uppercased() + what.dropFirst()) is not signed by \(threshold) of \(signers): \(error.message)")
        }
    }
}
