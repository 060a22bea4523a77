import Foundation
import Hummingbird
import ModelDepotRollouts
import ModelDepotShared

/// `GET /v1/models/{name}/manifest`: the version a device should use — its pin, the first
/// matching rule whose split holds its bucket, the rollout's default, else the newest published
/// version — as a signed envelope, with a strong ETag so that an unchanged answer costs a `304`
/// and `Depot-Root-Version` so that devices know when to fetch a newer root document.
///
/// One resolver (``resolve(model:key:headers:loaded:)``) decides every answer from memory, or
/// names what it must load first. Two adapters use it: the route here, which loads what is
/// named and asks again, and ``FastPaths`` before the router, which leaves anything that needs a
/// load (or is not a success) to the route.
struct ManifestController {
    static let route = "/v1/models/{name}/manifest"

    /// What the resolver needs before it can answer.
    enum Need {
        case rollout
        case entry(version: Int?, arm: CountedArm)
    }

    enum Resolution {
        case answer(FastPathAnswer)
        case needs(Need)
    }

    /// What the route loaded for one request (the cache may not keep it: an admin change can
    /// come between the load and the next look).
    struct Loaded {
        var rollout: Rollout?
        var entry: ManifestCache.Entry?
    }

    let catalog: any ModelCatalog
    let manifests: ManifestCache
    let metrics: ServerMetrics
    let usage: UsageCounter
    /// Makes the exposure tokens (``ExposureToken``).
    let signer: ManifestSigner
    let clock: @Sendable () -> Date

    func register(in group: RouterGroup<AppRequestContext>) {
        group.get("models/:name/manifest", use: manifest)
    }

    /// The route: resolves, loads what the resolver names, and resolves again (at most twice).
    func manifest(_ request: Request, context: AppRequestContext) async throws -> Response {
        let name = try context.modelName()
        let key = try context.requirePrincipal()
        let catalog = catalog
        var loaded = Loaded()
        while true {
            switch try resolve(model: name, key: key, headers: request.headers, loaded: loaded) {
            case .answer(let answer):
                return Response(answer)
            case .needs(.rollout):
                loaded.rollout = try await manifests.rollout(for: name) { try await catalog.rollout(of: name) }
            case .needs(.entry(let version, let arm)):
                loaded.entry = try await manifests.entry(for: name, version: version, arm: arm, catalog: catalog) {
                    if let version { return try await catalog.version(version, of: name) }
                    return try await catalog.newestPublishedVersion(of: name)
                }
            }
        }
    }

    /// The answer to `key`'s request for `model`'s manifest from the cache and what was `loaded`,
    /// or what must be loaded first.
    /// - Throws: ``DepotError``: `forbidden` for a key limited to other models, `bad_request` for
    ///   malformed device headers, `not_found` for a model with no published version.
    func resolve(model name: ModelName, key: AccessKey, headers: some DeviceFields, loaded: Loaded = Loaded()) throws -> Resolution {
        try key.checkMayRead(name)
        var device = try DeviceContext(headers: headers)
        guard let rollout = loaded.rollout ?? manifests.cachedRollout(for: name) else { return .needs(.rollout) }
        // Most rollouts have no condition on an attribute: their devices' attributes are only checked.
        if rollout.readsAttributes { try device.decodeAttributes(from: headers) }
        let assignment = rollout.assignment(for: device)
        let arm = CountedArm(assignment?.arm)
        let now = clock()
        guard let entry = loaded.entry ?? manifests.cachedEntry(for: name, version: assignment?.version, arm: arm, now: now) else {
            return .needs(.entry(version: assignment?.version, arm: arm))
        }
        guard case .manifest(let manifest) = entry else {
            throw DepotError(.notFound, "Model '\(name)' has no published version yet. Publish one with 'depot publish \(name) VERSION'.")
        }
        let today = ExposureToken.day(now)
        let notModified = EntityTag.ifNoneMatch(in: headers, matches: manifest.etag)
        // The token a device holds matters only to a 304 that would carry a new one.
        let holdsToday =
            notModified && device.installationID != nil
            && headers.withValue(.exposure) { $0.map { signer.isMadeToday($0, today: today) } ?? false }
        return .answer(
            answer(manifest, model: name, arm: arm, device: device, notModified: notModified, holdsToday: holdsToday, today: today))
    }

    /// A `304` when `If-None-Match` holds the manifest's tag (`notModified`), else the `200`,
    /// either with the installation's exposure token; counted as usage (a `200` also records the
    /// device's installation with its arm) and in the metrics. A `304` to a device that sent a
    /// token made today under the current key (`holdsToday`, for the version and arm the tag
    /// names) carries none: the device has what a new one would give, and most checks cost no MAC.
    private func answer(
        _ manifest: ManifestCache.Manifest, model: ModelName, arm: CountedArm, device: DeviceContext,
        notModified: Bool, holdsToday: Bool, today: Int
    ) -> FastPathAnswer {
        usage.record(.manifest(model: model, version: manifest.version), arm: arm)
        if notModified {
            metrics.recordManifest(notModified: true)
            guard let installation = device.installationID, !holdsToday else {
                return manifest.notModified
            }
            return manifest.notModified.exposing(
                signer.exposure(model: model, version: manifest.version, arm: arm, installation: installation, day: today))
        }
        let exposure = device.installationID.map {
            signer.exposure(model: model, version: manifest.version, arm: arm, installation: $0, day: today)
        }
        metrics.recordManifest(notModified: false)
        // An installation is handed its version with a 200; its 304s only confirm what it has.
        if let installation = device.installationID {
            usage.record(installation: installation, model: model, version: manifest.version, arm: arm)
        }
        return exposure.map(manifest.full.exposing) ?? manifest.full
    }
}
