import Hummingbird
import ModelDepotShared

/// `GET /v1/models/{name}/manifest`: the version a device should use — its pin, the first
/// matching rule whose split holds its bucket, the rollout's default, else the newest published
/// version — as a signed envelope, with a strong ETag so that an unchanged answer costs a `304`
/// and `Depot-Root-Version` so that devices know when to fetch a newer root document.
struct ManifestController {
    let catalog: any ModelCatalog
    let manifests: ManifestCache
    let metrics: ServerMetrics
    let usage: UsageCounter

    func register(in group: RouterGroup<AppRequestContext>) {
        group.get("models/:name/manifest", use: manifest)
    }

    func manifest(_ request: Request, context: AppRequestContext) async throws -> Response {
        let name = try context.modelName()
        let key = try context.requirePrincipal()
        if let allowed = key.models, !allowed.contains(name) {
            throw DepotError(.forbidden, "Key '\(key.id)' may read \(allowed.map(\.rawValue).joined(separator: ", ")), not '\(name)'.")
        }
        let device = try DeviceContext(headers: request.headers)
        let catalog = catalog
        let rollout = try await manifests.rollout(for: name) { try await catalog.rollout(of: name) }
        let assignment = rollout.assignment(for: device)
        let entry = try await manifests.entry(for: name, version: assignment?.version, arm: assignment?.arm.description ?? "latest",
                                              catalog: catalog) {
            if let number = assignment?.version { return try await catalog.version(number, of: name) }
            return try await catalog.newestPublishedVersion(of: name)
        }
        switch entry {
        case .unpublished:
            throw DepotError(.notFound, "Model '\(name)' has no published version yet. Publish one with 'depot publish \(name) VERSION'.")
        case .manifest(let body, let etag, let version, _):
            usage.record(.manifest(model: name, version: version), arm: assignment?.arm.description ?? "latest")
            var headers: HTTPFields = [.eTag: etag, .cacheControl: "private, no-cache"]
            if let root = manifests.signer.rootVersion { headers[.depotRootVersion] = String(root) }
            if EntityTag.ifNoneMatch(request.headers[.ifNoneMatch], matches: etag) {
                metrics.recordManifest(notModified: true)
                return Response(status: .notModified, headers: headers)
            }
            metrics.recordManifest(notModified: false)
            var full = headers
            full[.contentType] = "application/json; charset=utf-8"
            return Response(status: .ok, headers: full, body: .init(byteBuffer: body))
        }
    }
}
