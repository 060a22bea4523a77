import Hummingbird
import ModelDepotShared

/// A failure of the server's own — any 5xx — as the client sees it: the error's code, a public
/// message for that code and the request id under which the log keeps the cause. Database hosts,
/// bucket names, object keys and file paths stay in the log.
struct ServerFailure: HTTPResponseError {
    let code: DepotError.Code
    let requestID: String

    /// Whether an error must go out as a ``ServerFailure``: every 5xx.
    static func hidesCause(_ error: any Error) -> Bool {
        guard let error = error as? HTTPResponseError else { return true }
        return !(error is ServerFailure) && error.status.code >= 500
    }

    var status: HTTPResponse.Status { publicError.status }

    /// What the body says.
    var publicError: DepotError {
        let message = switch code {
        case .unavailable:
            "The server cannot reach its catalog database or object store right now (request id \(requestID)). Try again in a minute; if it persists, tell the server's operator the request id."
        case .insufficientStorage:
            "The server has no room left to store this (request id \(requestID)); nothing was stored. Tell the server's operator: its storage is full."
        default:
            "The server failed to answer this request (request id \(requestID)); its log names the cause. Try again; if it fails again, tell the server's operator the request id."
        }
        return DepotError(code, message)
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try publicError.response(from: request, context: context)
        response.headers[.depotRequestID] = requestID
        return response
    }
}
