import Hummingbird
import ModelDepotShared

/// The requests every device makes — its manifest and the blob it names, answered from memory by
/// the resolvers the routes use (``ManifestController/resolve(model:key:headers:loaded:)``,
/// ``BlobsController/plan(hex:key:headers:)``), and its outcome batches (``outcomeBatch(_:body:from:verified:)``)
/// — for ``FastPathHandler`` to answer before the router. Anything that needs a load, or is not a
/// success, is left to the router.
struct FastPaths: Sendable {
    /// The key a connection authenticated with: a keep-alive connection sending the same
    /// `Authorization` again is not hashed again while no key changed.
    struct VerifiedKey {
        let header: String
        let key: AccessKey
        let generation: Int
    }

    let authenticator: Authenticator
    let manifests: ManifestController
    let blobs: BlobsController
    let experiments: ExperimentService
    let metrics: ServerMetrics
    let log: RequestLog

    /// The answer, the route it stands for and the key that asked, or `nil` for the router.
    /// A secret other than a generated one from a client address that must wait
    /// (``AuthenticationThrottle``) goes to the router, which refuses it.
    func answer(
        _ request: FastPathRequest, from peer: @autoclosure () -> String?,
        verified: inout VerifiedKey?
    ) -> (answer: FastPathAnswer, route: String, key: String)? {
        guard let key = key(request, peer: peer(), verified: &verified) else { return nil }
        if let model = Self.manifestModel(in: request.path) {
            guard let name = try? ModelName(model),
                case .answer(let answer)? = try? manifests.resolve(model: name, key: key, headers: request.fields)
            else { return nil }
            return (answer, ManifestController.route, key.id)
        }
        let target = request.path.utf8
        let path = target.prefix { $0 != UInt8(ascii: "?") }
        if let hex = Self.remainder(of: path, after: DeviceRoute.blobPrefix),
            let answer = blobs.fastAnswer(
                hex: Substring(hex),
                query: path.endIndex < target.endIndex ? Substring(target[target.index(after: path.endIndex)...]) : nil,
                key: key, headers: request.fields)
        {
            return (answer, BlobsController.route, key.id)
        }
        return nil
    }

    func log(path: String, method: String, route: String, status: Int, start: ContinuousClock.Instant, key: String) {
        metrics.recordFastPathAnswer()
        RequestLogMiddleware.record(
            metrics, log, method: method, path: path,
            route: route, status: status, start: start, key: key, error: nil)
    }

    /// The request's key, from the connection's verified key when the header is the same (a key
    /// verified once on the connection is not refused for its address after).
    func key(_ request: FastPathRequest, peer: @autoclosure () -> String?, verified: inout VerifiedKey?) -> AccessKey? {
        func client() -> String? {
            authenticator.proxies.client(peer: peer(), forwardedFor: request.fields[device: .forwardedFor], forwardedProto: nil).address
        }
        if let known = verified, request.fields.withValue(.authorization, { $0?.spells(known.header) ?? false }),
            authenticator.keys.isCurrent(known.generation)
        {
            authenticator.throttle.succeeded(address: client(), kind: known.key.kind)
            return known.key
        }
        guard let header = request.fields[device: .authorization],
            let (key, generation) = authenticator.cachedKey(authorization: header, client: client())
        else { return nil }
        verified = VerifiedKey(header: header, key: key, generation: generation)
        return key
    }

    /// What stands for `{name}` in a manifest's target (`/v1/models/{name}/manifest`, a query
    /// left out), read on the target's bytes; `nil` for another target.
    static func manifestModel(in target: String) -> String? {
        var target = target
        return target.withUTF8 { bytes -> String? in
            let path = UnsafeBufferPointer(rebasing: bytes[..<(bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.count)])
            let prefix = DeviceRoute.manifestPrefix.utf8.count, suffix = DeviceRoute.manifestSuffix.utf8.count
            guard path.count > prefix + suffix,
                UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: path.prefix(prefix))).spells(DeviceRoute.manifestPrefix),
                UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: path.suffix(suffix))).spells(DeviceRoute.manifestSuffix)
            else { return nil }
            let name = UnsafeBufferPointer(rebasing: path[prefix..<(path.count - suffix)])
            guard !name.contains(UInt8(ascii: "/")) else { return nil }
            return String(decoding: name, as: UTF8.self)
        }
    }

    private static func remainder(of path: Substring.UTF8View, after prefix: String) -> Substring.UTF8View? {
        path.starts(with: prefix.utf8) ? path.dropFirst(prefix.utf8.count) : nil
    }
}
