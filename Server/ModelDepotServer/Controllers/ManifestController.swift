import Hummingbird
import ModelDepotShared

/// `GET /v1/models/{name}/manifest`: the version a device should use, with a strong ETag so
/// that an unchanged answer costs a `304`.
struct ManifestController {
    let catalog: any ModelCatalog
    let manifests: ManifestCache
    let metrics: ServerMetrics

    func register(in group: RouterGroup<AppRequestContext>) {
        group.get("models/:name/manifest", use: manifest)
    }

    func manifest(_ request: Request, context: AppRequestContext) async throws -> Response {
        let name = try context.modelName()
        let key = try context.requirePrincipal()
        if let allowed = key.models, !allowed.contains(name) {
            throw DepotError(.forbidden, "Key '\(key.id)' may read \(allowed.map(\.rawValue).joined(separator: ", ")), not '\(name)'.")
        }
        _ = try DeviceContext(headers: request.headers)
        let catalog = catalog
        switch try await manifests.entry(for: name, load: { try await catalog.newestPublishedVersion(of: name) }) {
        case .unpublished:
            throw DepotError(.notFound, "Model '\(name)' has no published version yet. Publish one with 'depot publish \(name) VERSION'.")
        case .manifest(let body, let etag):
            let headers: HTTPFields = [.eTag: etag, .cacheControl: "private, no-cache"]
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
