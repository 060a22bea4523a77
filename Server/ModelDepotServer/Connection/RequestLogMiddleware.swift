import Hummingbird
import ModelDepotShared

/// One line per request in the ``RequestLog``, and the request counters. An error that is not
/// an HTTP answer of its own becomes an `internal_error` here; what its body shows is decided by
/// the response encoder (``DepotError``'s `response(from:context:)`), which keeps a 5xx's cause
/// out of the body.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let metrics: ServerMetrics
    let log: RequestLog

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            record(request, context, status: Int(response.status.code), start: start, error: nil)
            return response
        } catch let error as HTTPResponseError where !ServerFailure.hidesCause(error) {
            record(request, context, status: Int(error.status.code), start: start, error: (error as? DepotError)?.code.rawValue)
            throw error
        } catch {
            let failure = error as? DepotError ?? DepotError(.internalError, "The server failed to answer.", cause: "\(error)")
            let response = try failure.response(from: request, context: context)
            record(
                request, context, status: Int(response.status.code), start: start, error: failure.code.rawValue,
                requestID: response.headers[.depotRequestID])
            return response
        }
    }

    private func record(
        _ request: Request, _ context: Context, status: Int, start: ContinuousClock.Instant, error: String?,
        requestID: String? = nil
    ) {
        Self.record(
            metrics, log, method: request.method.rawValue, path: request.uri.path, route: context.endpointPath ?? "unmatched",
            status: status, start: start, key: context.principal?.id, error: error, requestID: requestID)
    }

    /// Counts a request and keeps its log line (also for requests ``FastPathHandler`` answers
    /// before the router).
    static func record(
        _ metrics: ServerMetrics, _ log: RequestLog, method: String, path: @autoclosure () -> String, route: String,
        status: Int, start: ContinuousClock.Instant, key: String?, error: String?, requestID: String? = nil
    ) {
        metrics.recordRequest(route: route, method: method, status: status)
        guard log.isEnabled else { return }
        log.record(
            RequestLog.Line(
                seconds: RequestLog.now(), method: method, path: path(), route: route, status: status,
                elapsed: ContinuousClock.now - start, key: key, error: error, requestID: requestID))
    }
}
