import Crypto
import Foundation
import ModelDepotRollouts
import ModelDepotShared
import Synchronization

/// Signs manifests with the server's online key and keeps the chain of root documents that
/// lists it. Root documents are made and signed offline (`depot keys root init`, `depot keys
/// rotate`); the server checks each one it is given against the one before and switches to the
/// manifest key it lists.
final class ManifestSigner: Sendable {
    private struct State {
        var active: Curve25519.Signing.PrivateKey
        var pending: Curve25519.Signing.PrivateKey?
        var root: TrustedRoot?
        /// The keys arm tokens are checked with: the active key's first (new tokens are made
        /// with it), then the one it replaced while this process ran, so that a device that got
        /// its manifest just before a rotation still has its download counted.
        var armKeys: [ArmToken.Key]
        /// The keys exposure tokens are checked with, in the same order.
        var exposureKeys: [ExposureToken.Key]

        init(
            active: Curve25519.Signing.PrivateKey, pending: Curve25519.Signing.PrivateKey?, root: TrustedRoot?, replacing old: State? = nil
        ) {
            self.active = active
            self.pending = pending
            self.root = root
            let (key, exposureKey) = (ArmToken.Key(signingKey: active), ExposureToken.Key(signingKey: active))
            switch old {
            case let old? where old.active.rawRepresentation == active.rawRepresentation:
                (armKeys, exposureKeys) = (old.armKeys, old.exposureKeys)
            case let old?: (armKeys, exposureKeys) = ([key, old.armKeys[0]], [exposureKey, old.exposureKeys[0]])
            case nil: (armKeys, exposureKeys) = ([key], [exposureKey])
            }
        }
    }

    private let keys: any SigningKeyStore
    private let state: Mutex<State>
    /// The newest root document's version (0 before the first), read on every manifest request.
    private let rootVersionValue: Atomic<Int>

    /// Loads (or, on first start, creates) the online key and the newest root document.
    init(keys: any SigningKeyStore, catalog: any SigningCatalog) async throws {
        self.keys = keys
        let (active, pending) = try await keys.loadKeys()
        let root = try await catalog.latestRootDocument().map { data throws(DepotError) in try TrustedRoot(first: data) }
        state = Mutex(State(active: active, pending: pending, root: root))
        rootVersionValue = Atomic(root?.document.version ?? 0)
    }

    /// Takes the stored keys and the newest stored root document (stored through this server
    /// or another replica).
    /// - Returns: Whether what manifests are signed with changed (the active key or the root
    ///   document): a new pending key alone signs nothing, so signed manifests stay as they are.
    @discardableResult
    func reload(catalog: any SigningCatalog) async throws -> Bool {
        let (active, pending) = try await keys.loadKeys()
        let root = try await catalog.latestRootDocument().map { data throws(DepotError) in try TrustedRoot(first: data) }
        let (version, changed) = state.withLock { state in
            var changed = state.active.publicKey.rawRepresentation != active.publicKey.rawRepresentation
            var newer = state.root
            if let root, root.document.version > state.root?.document.version ?? 0 {
                newer = root
                changed = true
            }
            state = State(active: active, pending: pending, root: newer, replacing: state)
            return (state.root?.document.version ?? 0, changed)
        }
        rootVersionValue.store(version, ordering: .relaxed)
        return changed
    }

    /// What an operator should hear at start-up about trust, or `nil` when all is well: no root
    /// document yet, one that does not list this server's manifest key, or one about to expire.
    func startupWarning(now: Date) -> String? {
        let (root, active) = state.withLock { ($0.root, $0.active) }
        guard let root else {
            return
                "No root document yet: devices trust no manifest from this server. Run 'depot keys root generate --out FILE' and 'depot keys root init --root-key FILE'."
        }
        let keyid = PublicSigningKey.keyID(of: active.publicKey)
        if !root.document.manifestKeys.contains(where: { $0.keyid == keyid }) {
            return
                "Root document v\(root.document.version) does not list this server's manifest key \(keyid): devices will refuse its manifests. Restore the key from a backup (storage/keys with SQLite, the signing_key table with PostgreSQL), or run 'depot keys rotate --root-key FILE'."
        }
        if root.document.expires.timeIntervalSince(now) < 30 * 86_400 {
            return
                "Root document v\(root.document.version) expires at \(root.document.expires); publish a new one before then with 'depot keys rotate --root-key FILE --keep-signing-key'."
        }
        return nil
    }

    /// The newest root document's version, `nil` before the first.
    var rootVersion: Int? {
        let version = rootVersionValue.load(ordering: .relaxed)
        return version == 0 ? nil : version
    }

    var status: SigningStatus {
        state.withLock {
            SigningStatus(
                active: PublicSigningKey($0.active.publicKey), pending: $0.pending.map { PublicSigningKey($0.publicKey) },
                rootVersion: $0.root?.document.version)
        }
    }

    /// A signed envelope of the manifest.
    func sign(_ manifest: ModelManifest) throws -> Data {
        let key = state.withLock { $0.active }
        return try SignedEnvelope(signing: manifest, with: [key]).encoded()
    }

    /// The `arm` query value of the download URL of blob `sha256` handed out through `arm`
    /// (``ArmToken``), made with the active key.
    func armToken(arm: CountedArm, sha256: String) -> String {
        ArmToken.make(arm: arm, sha256: sha256, key: state.withLock { $0.armKeys[0] })
    }

    /// The arm a download of blob `sha256` counts for: the one its URL's `query` carries when
    /// the token checks (``ArmToken``), else ``CountedArm/unknown``.
    func countedArm(query: Substring?, sha256: Substring) -> CountedArm {
        ArmToken.arm(inQuery: query, sha256: sha256, keys: state.withLock { $0.armKeys })
    }

    /// The exposure token of `installation` given `version` of `model` through `arm` on `day`
    /// (``ExposureToken``), made with the active key.
    func exposure(model: ModelName, version: Int, arm: CountedArm, installation: String, day: Int) -> String {
        ExposureToken.make(
            model: model, version: version, arm: arm, installation: installation, day: day, key: state.withLock { $0.exposureKeys[0] })
    }

    /// Whether `token` was made today under the key new tokens are made with (its MAC unchecked).
    func isMadeToday(_ token: some Sequence<UInt8>, today: Int) -> Bool {
        ExposureToken.isMadeToday(token, today: today, key: state.withLock { $0.exposureKeys[0] })
    }

    /// Checks an event's exposure token (``ExposureToken/check(_:model:version:arm:installation:today:keys:)``).
    func checkExposure(_ token: String, model: ModelName, version: Int, arm: String, installation: String, today: Int) throws(DepotError)
        -> Bool
    {
        let keys = state.withLock { $0.exposureKeys }
        return try ExposureToken.check(
            token, model: model, version: version, arm: arm, installation: installation, today: today, keys: keys)
    }

    /// Stores the key for the next rotation (or returns the one made before); the signer takes
    /// it at its next ``reload(catalog:)``.
    func makePendingKey() async throws -> PublicSigningKey {
        if let pending = state.withLock({ $0.pending }) { return PublicSigningKey(pending.publicKey) }
        return PublicSigningKey(try await keys.addPendingKey(Curve25519.Signing.PrivateKey()).publicKey)
    }

    /// Checks root document N+1 (or the first) and stores it with the manifest key it lists as
    /// the active one (key files it does not list are deleted); the signer signs with that key
    /// from its next ``reload(catalog:)``.
    /// - Throws: ``DepotError``: the root document's verification errors; `conflict` when it is
    ///   not the next version; `bad_request` when it has expired or lists no key this server holds.
    func accept(_ envelope: Data, catalog: any SigningCatalog, now: Date) async throws -> RootDocument {
        // The stored keys, not only this replica's copy: the pending key may have been made
        // through another replica a moment ago.
        let (active, pending) = try await keys.loadKeys()
        let current = state.withLock { $0.root }
        let next: TrustedRoot
        if let current {
            if let claimed = Self.claimedVersion(envelope), claimed != current.document.version + 1 {
                throw DepotError(
                    .conflict,
                    "The server's newest root document is v\(current.document.version), so the next must be v\(current.document.version + 1), not v\(claimed). Sign the next one with 'depot keys rotate'."
                )
            }
            next = try current.successor(envelope)
        } else {
            next = try TrustedRoot(first: envelope)
            guard next.document.version == 1 else {
                throw DepotError(
                    .conflict,
                    "The server has no root document yet, so the first must be v1, not v\(next.document.version). Use 'depot keys root init'."
                )
            }
        }
        guard next.document.expires > now else {
            throw DepotError(
                .badRequest,
                "Root document v\(next.document.version) expired at \(next.document.expires); sign one that expires in the future.")
        }
        let listed = Set(next.document.manifestKeys.map(\.keyid))
        let signing = [pending, active].compactMap { $0 }.first { listed.contains(PublicSigningKey.keyID(of: $0.publicKey)) }
        guard let signing else {
            throw DepotError(
                .badRequest,
                "Root document v\(next.document.version) lists no manifest key this server holds (active: \(PublicSigningKey.keyID(of: active.publicKey))). Make one with 'depot keys rotate', which lists it."
            )
        }
        try await catalog.addRootDocument(version: next.document.version, envelope: envelope, at: now)
        try await keys.activateKey(PublicSigningKey.keyID(of: signing.publicKey))
        return next.document
    }

    /// The version a root document says it has, before anything about it is trusted (for the
    /// conflict message only).
    private static func claimedVersion(_ envelope: Data) -> Int? {
        guard let payload = try? SignedEnvelope.decode(envelope, limit: TrustedRoot.maximumSize, what: "").payload else { return nil }
        return (try? SignedJSON.decoder.decode(RootDocument.self, from: payload))?.version
    }
}
