import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ModelDepotShared

extension ModelDownloader {
    /// Verifies a manifest the server sent: walks to the newest root document when the answer
    /// suggests one (a higher `Depot-Root-Version`, a signing key the trusted root does not list,
    /// or no check within `rootCheckInterval`), checks signatures, model, expiry and manifest
    /// version, and records the version as the lowest acceptable from now on.
    /// - Throws: ``DepotError``: every signature, root, expiry and rollback error of ``TrustedRoot``.
    func verifiedManifest(_ data: Data, _ response: HTTPURLResponse, for model: ModelName) async throws -> ModelManifest {
        let signers = (try? SignedEnvelope.decode(data, limit: ModelManifest.maximumSize, what: ""))?.envelope.signatures.map(\.keyid) ?? []
        let advertised = response.value(forHTTPHeaderField: "Depot-Root-Version").flatMap(Int.init)
        let root = try await newestRoot(advertised: advertised, signers: signers)
        var state = trust.state()
        let manifest = try root.verifyManifest(data, for: model, now: configuration.clock(), clockSkew: configuration.clockSkew,
                                               minimumVersion: state.manifestVersions[model.rawValue])
        state.manifestVersions[model.rawValue] = max(manifest.manifestVersion, state.manifestVersions[model.rawValue] ?? 0)
        do {
            try trust.save(state)
        } catch {
            throw DepotError(.fileUnreadable, "Could not record manifest version \(manifest.manifestVersion) of '\(model)' in \(trust.directory.path): \(error.localizedDescription). Without it a replayed older manifest could not be recognised, so the update stops here.")
        }
        return manifest
    }

    /// The newest root document the device trusts, fetching the ones after it when needed.
    private func newestRoot(advertised: Int?, signers: [String]) async throws -> TrustedRoot {
        var root = try await startingRoot()
        let checkedAt = trust.state().rootCheckedAt
        let stale = checkedAt.map { configuration.clock().timeIntervalSince($0) >= configuration.rootCheckInterval } ?? true
        let listed = Set(root.document.manifestKeys.map(\.keyid))
        guard stale || (advertised ?? 0) > root.document.version || !signers.contains(where: listed.contains) else { return root }
        for _ in 0..<configuration.maximumRootSteps {
            guard let data = try await rootDocument(root.document.version + 1) else {
                var state = trust.state()
                state.rootCheckedAt = configuration.clock()
                try? trust.save(state)
                break
            }
            root = try root.successor(data)
            try? trust.save(root)
            trustedRoot = root
        }
        return root
    }

    /// The stored root, else the pinned one (root document 1 fetched for a pinned key).
    private func startingRoot() async throws -> TrustedRoot {
        if let trustedRoot { return trustedRoot }
        let root: TrustedRoot
        if let stored = trust.root() {
            root = stored
        } else {
            switch configuration.trustedRoot {
            case .rootDocument(let data):
                root = try TrustedRoot(first: data)
            case .publicKey(let text):
                let key = try PublicSigningKey(publicKeyBase64: text)
                guard let data = try await rootDocument(1) else {
                    throw DepotError(.untrustedRoot, "The server has no root document v1, so no manifest can be trusted; its owner publishes one with 'depot keys root init'.")
                }
                root = try TrustedRoot(first: data, pinnedKey: key)
            }
            try? trust.save(root)
        }
        trustedRoot = root
        return root
    }

    /// Root document `version`, or `nil` when the server has none (404) or cannot be reached.
    private func rootDocument(_ version: Int) async throws -> Data? {
        var request = URLRequest(url: configuration.serverURL.appendingPathComponent("v1/keys/root/\(version).json"))
        request.setValue("Bearer \(configuration.appKey)", forHTTPHeaderField: "Authorization")
        let (data, response): (Data, HTTPURLResponse)
        do {
            (data, response) = try await configuration.transport.data(for: request, limit: TrustedRoot.maximumSize)
        } catch is TransferLimitExceeded {
            throw DepotError(.metadataTooLarge, "Root document v\(version) is larger than \(TrustedRoot.maximumSize) bytes; it was not read.")
        } catch {
            try Task.checkCancellation()
            return nil
        }
        return response.statusCode == 200 ? data : nil
    }
}
