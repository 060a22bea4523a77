import Hummingbird
import Logging
import ModelDepotShared

/// One structured log line per request, and the request counters; errors become JSON bodies here.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let status: Int
        let response: Response
        do {
            response = try await next(request, context)
            status = Int(response.status.code)
        } catch let error as HTTPResponseError {
            status = Int(error.status.code)
            log(request, context, status: status, start: start, error: (error as? DepotError)?.code.rawValue)
            throw error
        } catch {
            log(request, context, status: 500, start: start, error: "\(error)")
            throw DepotError(.internalError, "The server failed to answer: \(error).")
        }
        log(request, context, status: status, start: start, error: nil)
        return response
    }

    private func log(_ request: Request, _ context: Context, status: Int, start: ContinuousClock.Instant, error: String?) {
        Self.record(metrics, context.logger, method: request.method.rawValue, path: request.uri.path, route: context.endpointPath ?? "unmatched",
                    status: status, start: start, key: context.principal?.id, error: error)
    }

    /// Counts a request and, at log level info or below, writes its line (also for requests
    /// ``HotPathHandler`` answers before the router).
    static func record(_ metrics: ServerMetrics, _ logger: Logger, method: String, path: @autoclosure () -> String, route: String, status: Int,
                       start: ContinuousClock.Instant, key: String?, error: String?) {
        metrics.recordRequest(route: route, method: method, status: status)
        guard logger.logLevel <= .info else { return }
        let elapsed = ContinuousClock.now - start
        var metadata: Logger.Metadata = [
            "method": "\(method)", "path": "\(path())", "route": "\(route)",
            "status": "\(status)", "duration_ms": "\(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)",
        ]
        if let key { metadata["key"] = "\(key)" }
        if let error { metadata["error"] = "\(error)" }
        logger.info("request", metadata: metadata)
    }
}
