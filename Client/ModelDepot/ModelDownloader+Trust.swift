import Foundation
import ModelDepotShared

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension ModelDownloader {
    /// Verifies a manifest the server sent: walks to the newest root document when the answer
    /// suggests one (a higher `Depot-Root-Version`, a signing key the trusted root does not list,
    /// or no check within `rootCheckInterval`), checks signatures, model, expiry and manifest
    /// version, and records the version as the lowest acceptable from now on, with the keys that
    /// signed it (a later root that drops or revokes one of them withdraws that floor).
    /// - Throws: `DepotError`: every signature, root, expiry and rollback error of `TrustedRoot`.
    func verifiedManifest(_ data: Data, _ response: HTTPURLResponse, for model: ModelName) async throws -> ModelManifest {
        let signers = (try? SignedEnvelope.decode(data, limit: ModelManifest.maximumSize, what: ""))?.envelope.signatures.map(\.keyid) ?? []
        let advertised = response.value(forHTTPHeaderField: DepotHeader.rootVersion).flatMap(Int.init)
        let root = try await newestRoot(advertised: advertised, signers: signers)
        var state = try trust.state()
        let verified = try root.verifyManifest(
            data, for: model, now: configuration.clock(), clockSkew: configuration.clockSkew,
            minimumVersion: state.manifestVersions[model.rawValue])
        let manifest = verified.manifest
        if manifest.manifestVersion >= state.manifestVersions[model.rawValue] ?? 0 {
            state.manifestVersions[model.rawValue] = manifest.manifestVersion
            state.manifestSigners[model.rawValue] = verified.signers
        }
        do {
            try trust.save(state)
        } catch {
            throw DepotError(
                .fileUnreadable,
                "Could not record manifest version \(manifest.manifestVersion) of '\(model)' in \(trust.directory.path): \(error.localizedDescription). Without it a replayed older manifest could not be recognised, so the update stops here."
            )
        }
        return manifest
    }

    /// The newest root document the device trusts, fetching the ones after it when needed.
    /// Concurrent checks of several models may walk at once: each adopts only a root newer than
    /// the one trusted already, and each returns the newest trusted when it ends.
    private func newestRoot(advertised: Int?, signers: [String]) async throws -> TrustedRoot {
        var root = try await startingRoot()
        let checkedAt = try trust.state().rootCheckedAt
        let stale = checkedAt.map { configuration.clock().timeIntervalSince($0) >= configuration.rootCheckInterval } ?? true
        let listed = Set(root.document.manifestKeys.map(\.keyid))
        guard stale || (advertised ?? 0) > root.document.version || !signers.contains(where: listed.contains) else { return root }
        for _ in 0..<configuration.maximumRootSteps {
            let before = root.document.version
            let next: Data?
            do {
                next = try await rootDocument(before + 1)
            } catch is RootDocumentUnavailable {
                break
            }
            if let trusted = trustedRoot, trusted.document.version > before {
                root = trusted  // another check got further meanwhile: go on from there
                continue
            }
            guard let next else {
                var state = try trust.state()
                state.rootCheckedAt = configuration.clock()
                try? trust.save(state)
                break
            }
            try adopt(try root.successor(next))
            root = trustedRoot ?? root
        }
        if let trusted = trustedRoot, trusted.document.version > root.document.version { root = trusted }
        return root
    }

    /// Trusts `root` from now on if it is newer than the root trusted already, and drops the
    /// manifest-version floors that it no longer vouches for (TUF's rule: when the root rotates
    /// the keys that signed a role's metadata, clients forget what those keys vouched for), so a
    /// version fast-forwarded by a stolen key does not lock the device out after the rotation.
    private func adopt(_ root: TrustedRoot) throws(DepotError) {
        guard root.document.version > trustedRoot?.document.version ?? 0 else { return }
        var state = try trust.state()
        trustedRoot = root
        for (model, signers) in state.manifestSigners where !root.stillVouchesFor(signers) {
            state.manifestVersions[model] = nil
            state.manifestSigners[model] = nil
        }
        try? trust.save(root, state)
    }

    /// The stored root, else the pinned one: the pinned root document, or for a pinned key the
    /// first root document it signed (1, 2, … — an app may pin a key introduced by a rotation).
    private func startingRoot() async throws -> TrustedRoot {
        if let trustedRoot { return trustedRoot }
        if let stored = try trust.root() {
            try adopt(stored)
            return trustedRoot ?? stored
        }
        switch configuration.trustedRoot {
        case .rootDocument(let data):
            try adopt(try TrustedRoot(first: data))
        case .publicKey(let text):
            let key = try PublicSigningKey(publicKeyBase64: text)
            var failure: DepotError?
            for version in 1...configuration.maximumRootSteps where trustedRoot == nil {
                let data: Data?
                do {
                    data = try await rootDocument(version)
                } catch is RootDocumentUnavailable {
                    throw DepotError(
                        .unavailable,
                        "Could not fetch root document v\(version) from \(configuration.serverURL.absoluteString); no manifest can be trusted before it."
                    )
                }
                guard let data else { break }
                do throws(DepotError) {
                    try adopt(try TrustedRoot(first: data, pinnedKey: key))
                } catch {
                    failure = error
                }
            }
            guard trustedRoot == nil else { break }
            throw failure
                ?? DepotError(
                    .untrustedRoot,
                    "The server has no root document signed by the pinned root key '\(key.keyid)', so no manifest can be trusted; its owner publishes one with 'depot keys root init'."
                )
        }
        return trustedRoot!
    }

    /// Root document `version`, or `nil` when the server has none (404).
    /// - Throws: `RootDocumentUnavailable` when the server cannot be reached or answers otherwise;
    ///   `DepotError` (`metadata_too_large`) for a document over 512 KiB.
    private func rootDocument(_ version: Int) async throws -> Data? {
        var request = URLRequest(url: configuration.serverURL.appendingPathComponent("v1/keys/root/\(version).json"))
        request.setValue("Bearer \(configuration.appKey)", forHTTPHeaderField: "Authorization")
        let (data, response): (Data, HTTPURLResponse)
        do {
            (data, response) = try await configuration.transport.data(for: request, limits: limits(maximumBytes: TrustedRoot.maximumSize))
        } catch is TransferLimitExceeded {
            throw DepotError(
                .metadataTooLarge, "Root document v\(version) is larger than \(TrustedRoot.maximumSize) bytes; it was not read.")
        } catch {
            try Task.checkCancellation()
            throw RootDocumentUnavailable()
        }
        switch response.statusCode {
        case 200: return data
        case 404: return nil
        default: throw RootDocumentUnavailable()
        }
    }
}

/// A root document could not be fetched (network, or a status other than 200 and 404): the walk
/// stops with what is trusted so far, and is tried again at the next check.
struct RootDocumentUnavailable: Error {}
