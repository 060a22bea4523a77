import Crypto
import Foundation
import Hummingbird
import ModelDepotRollouts
import ModelDepotShared
import Synchronization

/// Rollouts and signed manifests with their ETags in memory, per model: the hot path (every app
/// start) answers without the database. An admin change to a model invalidates its entries and
/// gives its next manifests a higher manifest version; a manifest past half its lifetime is
/// signed again with a new expiry (same manifest version), so it never expires while the
/// server runs.
final class ManifestCache: Sendable {
    /// A signed manifest, or the fact that the model has no published version to hand out.
    enum Entry: Sendable {
        case manifest(Manifest)
        case unpublished
    }

    /// A signed manifest with its two answers ready to send: the `200` with the envelope, and
    /// the `304` for a device that has it. A class: a look-up copies one reference, not each field.
    final class Manifest: Sendable {
        let version: Int
        let etag: String
        let refreshAt: Date
        let full: FastPathAnswer
        let notModified: FastPathAnswer

        init(body: ByteBuffer, version: Int, refreshAt: Date, rootVersion: Int?) {
            self.version = version
            self.refreshAt = refreshAt
            etag = "\"\(SHA256.hash(data: body.readableBytesView).hex.prefix(32))\""
            var headers: HTTPFields = [.eTag: etag, .cacheControl: "private, no-cache"]
            if let rootVersion { headers[.depotRootVersion] = String(rootVersion) }
            notModified = FastPathAnswer(status: .notModified, headers: headers, body: nil, encoded: true)
            headers[.contentType] = "application/json; charset=utf-8"
            headers[.contentLength] = String(body.readableBytes)
            full = FastPathAnswer(status: .ok, headers: headers, body: body, encoded: true)
        }
    }

    /// One answer: a version (`nil` for the newest published one) and the arm that chose it.
    private struct Key: Hashable {
        let version: Int?
        let arm: CountedArm
    }

    /// A model's answers since its last change.
    private struct Answers {
        var generation = 0
        var manifestVersion: Int?
        var entries: [Key: Entry] = [:]
    }

    let signer: ManifestSigner
    let lifetime: TimeInterval
    let clock: @Sendable () -> Date
    private let answers = Mutex<[ModelName: Answers]>([:])
    private let rollouts = Mutex<[ModelName: Rollout]>([:])

    init(signer: ManifestSigner, lifetime: TimeInterval, clock: @escaping @Sendable () -> Date) {
        self.signer = signer
        self.lifetime = lifetime
        self.clock = clock
    }

    func rollout(for model: ModelName, load: () async throws -> Rollout) async throws -> Rollout {
        if let rollout = rollouts.withLock({ $0[model] }) { return rollout }
        let generation = answers.withLock { $0[model]?.generation ?? 0 }
        let rollout = try await load()
        // A rollout read before an admin change must not outlive it in the cache.
        answers.withLock { all in
            if (all[model]?.generation ?? 0) == generation { rollouts.withLock { $0[model] = rollout } }
        }
        return rollout
    }

    /// The model's rollout if it is cached.
    func cachedRollout(for model: ModelName) -> Rollout? {
        rollouts.withLock { $0[model] }
    }

    /// An answer if it is cached and not yet due to be signed again at `now`.
    func cachedEntry(for model: ModelName, version: Int?, arm: CountedArm, now: Date) -> Entry? {
        guard let entry = answers.withLock({ $0[model]?.entries[Key(version: version, arm: arm)] }) else { return nil }
        if case .manifest(let manifest) = entry, manifest.refreshAt <= now { return nil }
        return entry
    }

    /// The answer, from the cache or made now. An answer made while an admin change happened is
    /// made again for the new state (at most three times), so that no device gets a manifest
    /// version the cache will not hand out.
    func entry(
        for model: ModelName, version: Int?, arm: CountedArm, catalog: any ModelCatalog,
        load: () async throws -> ModelVersion?
    ) async throws -> Entry {
        var attempt = 0
        while true {
            attempt += 1
            let (entry, stored) = try await makeEntry(for: model, version: version, arm: arm, catalog: catalog, load: load)
            if stored || attempt == 3 { return entry }
        }
    }

    private func makeEntry(
        for model: ModelName, version: Int?, arm: CountedArm, catalog: any ModelCatalog,
        load: () async throws -> ModelVersion?
    ) async throws -> (Entry, stored: Bool) {
        let key = Key(version: version, arm: arm)
        let now = clock()
        let (cached, generation, known) = answers.withLock {
            ($0[model]?.entries[key], $0[model]?.generation ?? 0, $0[model]?.manifestVersion)
        }
        switch cached {
        case .unpublished?: return (.unpublished, true)
        case .manifest(let manifest)? where manifest.refreshAt > now: return (cached!, true)
        default: break
        }
        guard let found = try await load() else {
            return (.unpublished, store(.unpublished, for: key, of: model, generation: generation))
        }
        var manifestVersion = known ?? 0
        if known == nil { manifestVersion = try await agreedManifestVersion(of: model, generation: generation, at: now, catalog: catalog) }
        // The patches from the nearest versions first, so that many files and a large --patch-from
        // still leave the manifest well inside the 64 KiB a device reads.
        let offered = try await catalog.patches(to: found.version, of: model).filter { $0.sha256 != nil }
            .sorted { $0.fromVersion > $1.fromVersion }.prefix(Self.maximumPatches)
        let patches = Dictionary(grouping: offered, by: \.file).mapValues { patches in
            patches.compactMap { patch in
                patch.sha256.map {
                    ModelManifest.Patch(from: patch.fromSha256, sha256: $0, size: patch.size, downloadURL: DeviceRoute.blob(sha256: $0))
                }
            }
        }
        let manifest = ModelManifest(
            model: model, version: found.version, sha256: found.sha256, size: found.size,
            downloadURL: DeviceRoute.blob(sha256: found.sha256, armToken: signer.armToken(arm: arm, sha256: found.sha256)),
            tensors: .init(inputs: found.tflite.inputs, outputs: found.tflite.outputs),
            patches: patches[""] ?? [],
            files: found.files.map {
                .init(
                    name: $0.name, sha256: $0.sha256, size: $0.size, downloadURL: DeviceRoute.blob(sha256: $0.sha256),
                    patches: patches[$0.name] ?? [])
            },
            arm: arm.stored,
            manifestVersion: manifestVersion, issued: now, expires: now.addingTimeInterval(lifetime))
        let body = try signer.sign(manifest)
        let entry = Entry.manifest(
            Manifest(
                body: ByteBuffer(bytes: body), version: found.version,
                refreshAt: now.addingTimeInterval(lifetime / 2), rootVersion: signer.rootVersion))
        return (entry, store(entry, for: key, of: model, generation: generation))
    }

    /// The most patches one manifest lists (about 370 bytes each in the envelope: 18 KiB).
    static let maximumPatches = 48

    /// Forgets a model's answers after an admin change; its next manifests get a higher version.
    func invalidate(_ model: ModelName) {
        answers.withLock { all in
            all[model] = Answers(generation: (all[model]?.generation ?? 0) + 1)
            rollouts.withLock { _ = $0.removeValue(forKey: model) }
        }
    }

    /// Forgets every answer (a new root document changed the signing key).
    func invalidateAll() {
        answers.withLock { all in
            for model in all.keys { all[model] = Answers(generation: all[model]!.generation + 1) }
        }
    }

    /// The manifest version for the model's current generation: the one the catalog holds for
    /// the model's last change (so every replica signs the same state with the same version), or
    /// the one a concurrent request got first: every answer of one generation carries the same.
    private func agreedManifestVersion(of model: ModelName, generation: Int, at now: Date, catalog: any ModelCatalog) async throws -> Int {
        let next = try await catalog.manifestVersion(of: model, notBelow: Int(now.timeIntervalSince1970 * 1000))
        return answers.withLock { all in
            var current = all[model] ?? Answers()
            guard current.generation == generation else { return next }
            if let agreed = current.manifestVersion { return agreed }
            current.manifestVersion = next
            all[model] = current
            return next
        }
    }

    /// Caches an answer made for `generation`; `false` when the model changed meanwhile.
    private func store(_ entry: Entry, for key: Key, of model: ModelName, generation: Int) -> Bool {
        answers.withLock { all in
            var current = all[model] ?? Answers()
            guard current.generation == generation else { return false }
            current.entries[key] = entry
            all[model] = current
            return true
        }
    }
}
