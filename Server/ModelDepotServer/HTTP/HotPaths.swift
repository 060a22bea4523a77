import Hummingbird
import Logging
import ModelDepotShared

/// The two requests every device makes — its manifest and the blob it names — answered from
/// caches by the same code the routes use, for ``HotPathHandler`` to send before the router.
/// Anything not cached, or not a success, is left to the router.
struct HotPaths: Sendable {
    let keys: AccessKeyCache
    let manifests: ManifestController
    let blobs: BlobsController
    let metrics: ServerMetrics
    let logger: Logger

    /// The answer, the route it stands for and the key that asked, or `nil` for the router.
    func answer(_ request: HTTPRequest) -> (answer: HotAnswer, route: String, key: String)? {
        guard request.method == .get, let target = request.path, target.hasPrefix("/v1/"),
              let header = request.headerFields[.authorization], let secret = AuthenticationMiddleware.bearerSecret(header),
              let key = keys.cachedKey(secret) else { return nil }
        let path = target.prefix { $0 != "?" }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count == 5 else { return nil }
        if segments[2] == "models", segments[4] == "manifest",
           let answer = manifests.cachedAnswer(model: segments[3], key: key, headers: request.headerFields) {
            return (answer, ManifestController.route, key.id)
        }
        if segments[2] == "blobs", segments[3] == "sha256", let answer = blobs.cachedAnswer(hex: segments[4], headers: request.headerFields) {
            return (answer, BlobsController.route, key.id)
        }
        return nil
    }

    func log(_ request: HTTPRequest, route: String, status: Int, start: ContinuousClock.Instant, key: String) {
        RequestLogMiddleware.record(metrics, logger, method: request.method.rawValue, path: String((request.path ?? "").prefix { $0 != "?" }),
                                    route: route, status: status, start: start, key: key, error: nil)
    }
}
