import Hummingbird
import Logging
import ModelDepotShared

/// One line per request in the ``RequestLog``, and the request counters; errors become JSON
/// bodies here. A failure of the server's own (a 5xx) keeps its cause out of the body: the cause
/// goes to the log under a request id, and the body names only the code, a public message and
/// that id (``ServerFailure``).
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
            let failure = error as? ServerFailure
            record(request, context, status: Int(error.status.code), start: start,
                   error: failure?.code.rawValue ?? (error as? DepotError)?.code.rawValue, requestID: failure?.requestID)
            throw error
        } catch {
            let failure = Self.report(error, request, context)
            record(request, context, status: Int(failure.status.code), start: start, error: failure.code.rawValue, requestID: failure.requestID)
            throw failure
        }
    }

    /// Logs a failure of the server's own with its cause under a new request id.
    static func report(_ error: any Error, _ request: Request, _ context: Context) -> ServerFailure {
        let cause = error as? DepotError ?? DepotError(.internalError, "\(error)")
        let code = (error as? HTTPResponseError).map { _ in cause.code } ?? .internalError
        let failure = ServerFailure(code: code, requestID: String(UInt64.random(in: .min ... .max), radix: 16))
        context.logger.error("the server failed to answer", metadata: [
            "request_id": "\(failure.requestID)", "method": "\(request.method)", "path": "\(request.uri.path)",
            "error": "\(code.rawValue)", "cause": "\(cause.cause.map { cause.message + " " + $0 } ?? cause.message)",
        ])
        return failure
    }

    private func record(_ request: Request, _ context: Context, status: Int, start: ContinuousClock.Instant, error: String?,
                        requestID: String? = nil) {
        Self.record(metrics, log, method: request.method.rawValue, path: request.uri.path, route: context.endpointPath ?? "unmatched",
                    status: status, start: start, key: context.principal?.id, error: error, requestID: requestID)
    }

    /// Counts a request and keeps its log line (also for requests ``HotPathHandler`` answers
    /// before the router).
    static func record(_ metrics: ServerMetrics, _ log: RequestLog, method: String, path: @autoclosure () -> String, route: String,
                       status: Int, start: ContinuousClock.Instant, key: String?, error: String?, requestID: String? = nil) {
        metrics.recordRequest(route: route, method: method, status: status)
        guard log.isEnabled else { return }
        log.record(RequestLog.Line(seconds: RequestLog.now(), method: method, path: path(), route: route, status: status,
                                   elapsed: ContinuousClock.now - start, key: key, error: error, requestID: requestID))
    }
}
