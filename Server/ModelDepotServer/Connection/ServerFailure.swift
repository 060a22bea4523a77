import Hummingbird
import Logging
import ModelDepotShared

/// A failure of the server's own — any 5xx — as the client sees it: the error's code, a public
/// message for that code and the request id under which the log keeps the message and cause.
/// Database hosts, bucket names, object keys and file paths stay in the log. Made by the response
/// encoder (``DepotError``'s `response(from:context:)``), whoever throws the error.
struct ServerFailure {
    let code: DepotError.Code
    let requestID: String

    /// Whether an error must go out as a ``ServerFailure``: every 5xx, and every error that is
    /// not an HTTP answer of its own.
    static func hidesCause(_ error: any Error) -> Bool {
        guard let error = error as? HTTPResponseError else { return true }
        return error.status.code >= 500
    }

    /// Logs `error`, with its message and cause, under a new request id.
    init(logging error: DepotError, request: Request, logger: Logger) {
        code = error.code
        requestID = String(UInt64.random(in: .min ... .max), radix: 16)
        logger.error(
            "the server failed to answer",
            metadata: [
                "request_id": "\(requestID)", "method": "\(request.method)", "path": "\(request.uri.path)",
                "error": "\(code.rawValue)", "cause": "\(error.cause.map { error.message + " " + $0 } ?? error.message)",
            ])
    }

    /// What the body says.
    var publicError: DepotError {
        let message =
            switch code {
            case .unavailable:
                "The server cannot reach its catalog database or object store right now (request id \(requestID)). Try again in a minute; if it persists, tell the server's operator the request id."
            case .insufficientStorage:
                "The server has no room left to store this (request id \(requestID)); nothing was stored. Tell the server's operator: its storage is full."
            default:
                "The server failed to answer this request (request id \(requestID)); its log names the cause. Try again; if it fails again, tell the server's operator the request id."
            }
        return DepotError(code, message)
    }

    /// The public error's body, with the request id in `Depot-Request-ID`.
    func response() throws -> Response {
        var response = try publicError.jsonResponse()
        response.headers[.depotRequestID] = requestID
        return response
    }
}
