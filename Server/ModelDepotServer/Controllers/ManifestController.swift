import Hummingbird
import ModelDepotShared

/// `GET /v1/models/{name}/manifest`: the version a device should use — its pin, the first
/// matching rule whose split holds its bucket, the rollout's default, else the newest published
/// version — as a signed envelope, with a strong ETag so that an unchanged answer costs a `304`
/// and `Depot-Root-Version` so that devices know when to fetch a newer root document.
///
/// The router answers every request; ``HotPathHandler`` answers the same way, before the router,
/// when the key, the rollout and the manifest are all cached.
struct ManifestController {
    static let route = "/v1/models/{name}/manifest"

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
        try Self.check(key, mayRead: name)
        let device = try DeviceContext(headers: request.headers)
        let catalog = catalog
        let rollout = try await manifests.rollout(for: name) { try await catalog.rollout(of: name) }
        let assignment = rollout.assignment(for: device)
        let arm = assignment?.arm.description ?? "latest"
        let entry = try await manifests.entry(for: name, version: assignment?.version, arm: arm, catalog: catalog) {
            if let number = assignment?.version { return try await catalog.version(number, of: name) }
            return try await catalog.newestPublishedVersion(of: name)
        }
        guard case .manifest(let body, let etag, let version, _) = entry else {
            throw DepotError(.notFound, "Model '\(name)' has no published version yet. Publish one with 'depot publish \(name) VERSION'.")
        }
        let answer = answer(body: body, etag: etag, version: version, model: name, arm: arm, device: device,
                            ifNoneMatch: request.headers.value(.ifNoneMatch))
        return Response(status: answer.status, headers: answer.headers, body: answer.body.map { .init(byteBuffer: $0) } ?? .init())
    }

    /// The answer from caches alone, or `nil` when anything is not cached or the answer is not a
    /// `200`/`304` (the router then answers, with the same result or the error).
    func cachedAnswer(model text: Substring, key: AccessKey, headers: HTTPFields) -> HotAnswer? {
        guard let name = try? ModelName(String(text)), (try? Self.check(key, mayRead: name)) != nil,
              let device = try? DeviceContext(headers: headers), let rollout = manifests.cachedRollout(for: name) else { return nil }
        let assignment = rollout.assignment(for: device)
        let arm = assignment?.arm.description ?? "latest"
        guard case .manifest(let body, let etag, let version, _)? = manifests.cachedEntry(for: name, version: assignment?.version, arm: arm)
        else { return nil }
        return answer(body: body, etag: etag, version: version, model: name, arm: arm, device: device, ifNoneMatch: headers.value(.ifNoneMatch))
    }

    /// A `304` when `If-None-Match` holds the manifest's tag, else the `200`; counted as usage
    /// (a `200` also records the device's installation with its arm) and in the metrics.
    private func answer(body: ByteBuffer, etag: String, version: Int, model: ModelName, arm: String, device: DeviceContext,
                        ifNoneMatch: String?) -> HotAnswer {
        usage.record(.manifest(model: model, version: version), arm: arm)
        var headers: HTTPFields = [.eTag: etag, .cacheControl: "private, no-cache"]
        if let root = manifests.signer.rootVersion { headers[.depotRootVersion] = String(root) }
        if EntityTag.ifNoneMatch(ifNoneMatch, matches: etag) {
            metrics.recordManifest(notModified: true)
            return HotAnswer(status: .notModified, headers: headers, body: nil)
        }
        metrics.recordManifest(notModified: false)
        // An installation is handed its version with a 200; its 304s only confirm what it has.
        if let installation = device.installationID { usage.record(installation: installation, model: model, version: version, arm: arm) }
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.contentLength] = String(body.readableBytes)
        return HotAnswer(status: .ok, headers: headers, body: body)
    }

    private static func check(_ key: AccessKey, mayRead name: ModelName) throws {
        if let allowed = key.models, !allowed.contains(name) {
            throw DepotError(.forbidden, "Key '\(key.id)' may read \(allowed.map(\.rawValue).joined(separator: ", ")), not '\(name)'.")
        }
    }
}

/// A complete answer that needs no more work: status, headers and an optional body, or a
/// byte range of a file (sent with `sendfile` by ``HotPathHandler``).
struct HotAnswer: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: ByteBuffer?
    /// A byte range of a file that must still be `identity`; `onStart` runs when sending begins,
    /// `onComplete` once every byte went out.
    var file: (path: String, identity: FileIdentity?, range: ClosedRange<Int>, onStart: @Sendable () -> Void,
               onComplete: @Sendable () -> Void)?

    init(status: HTTPResponse.Status, headers: HTTPFields, body: ByteBuffer?) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    init(status: HTTPResponse.Status, headers: HTTPFields, file path: String, identity: FileIdentity?, range: ClosedRange<Int>,
         onStart: @escaping @Sendable () -> Void, onComplete: @escaping @Sendable () -> Void) {
        self.status = status
        self.headers = headers
        file = (path, identity, range, onStart, onComplete)
    }
}
