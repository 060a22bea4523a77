import Foundation
import Hummingbird
import ModelDepotShared

extension DepotError: HTTPResponseError {
    /// The one mapping from error codes to HTTP statuses.
    public var status: HTTPResponse.Status {
        switch code {
        case .invalidName, .badRequest, .digestMismatch: .badRequest
        case .unauthorized: .unauthorized
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .alreadyExists, .conflict: .conflict
        case .payloadTooLarge: .contentTooLarge
        case .rangeNotSatisfiable: .rangeNotSatisfiable
        case .internalError, .fileUnreadable: .internalServerError
        case .unavailable: .serviceUnavailable
        default: .unprocessableContent // every TFLite verification failure
        }
    }

    /// `{"error": {"code", "message"}}` with the status above.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if code == .unauthorized { headers[.wwwAuthenticate] = "Bearer realm=\"ModelDepot\"" }
        let body = try JSONEncoder().encode(ErrorBody(error: self))
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
