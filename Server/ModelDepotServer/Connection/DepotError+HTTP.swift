import Foundation
import Hummingbird
import ModelDepotShared

extension DepotError: HTTPResponseError {
    /// The one mapping from error codes to HTTP statuses: every code by name, none by default,
    /// so a new code does not compile until it has its status.
    public var status: HTTPResponse.Status {
        switch code {
        case .invalidName, .badRequest, .digestMismatch, .sizeMismatch, .trailerMissing, .invalidCompanionFile, .invalidEvents,
            .invalidMetric:
            .badRequest
        case .unauthorized: .unauthorized
        case .forbidden, .invalidExposure, .expiredExposure: .forbidden
        case .notFound: .notFound
        case .alreadyExists, .conflict: .conflict
        case .payloadTooLarge: .contentTooLarge
        case .rangeNotSatisfiable: .rangeNotSatisfiable
        case .tooManyRequests: .tooManyRequests
        case .requestHeadTooLarge: .requestHeaderFieldsTooLarge
        case .requestTimeout: .requestTimeout
        case .insufficientStorage: .init(code: 507, reasonPhrase: "Insufficient Storage")
        case .internalError, .fileUnreadable: .internalServerError
        case .unavailable: .serviceUnavailable
        // A file or document that is well-formed HTTP but not an acceptable model, metadata or signed document.
        case .modelTooSmall, .modelTooLarge, .wrongFileIdentifier, .unsupportedSchemaVersion, .offsetOutOfBounds, .misaligned,
            .invalidVTable, .unterminatedString, .nestingTooDeep, .tooManyTables, .noSubgraphs, .indexOutOfRange,
            .optionalTensorNotAllowed, .tensorIsInputAndOutput, .invalidShape, .tensorSizeOverflow, .unknownTensorType,
            .constantDataMismatch, .invalidQuantization, .externalBufferOutOfBounds, .invalidOperatorCode,
            .customOperatorNotAllowed, .flexOperatorNotAllowed, .sparseTensorNotAllowed, .signatureMismatch,
            .invalidModelMetadata, .invalidAssociatedFiles, .associatedFilesTooLarge, .associatedFileMissing,
            .invalidCompressedData, .invalidMetadata, .metadataTooLarge, .unsignedManifest, .unknownSigningKey,
            .revokedSigningKey, .duplicateSignature, .invalidSignature, .manifestExpired, .manifestRollback,
            .manifestMismatch, .untrustedRoot, .rootExpired:
            .unprocessableContent
        // Raised on the device only (downloads, conditions, images, codes from a newer server); a
        // server that raised one has a bug.
        case .conditionsNotMet, .notEnoughSpace, .cancelled, .originNotAllowed, .insecureRedirect, .transferStalled,
            .transferTooSlow, .storageUnreadable, .invalidImage, .unsupportedModel, .invalidOptions, .invalidPatch, .unrecognized:
            .internalServerError
        }
    }

    /// The answer to every error the server sends, wherever it was thrown: a client's error as
    /// ``jsonResponse()``; a failure of the server's own (any 5xx) as a ``ServerFailure``, whose
    /// body names a request id instead of the message, which goes to the log with the cause.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        guard status.code < 500 else { return try ServerFailure(logging: self, request: request, logger: context.logger).response() }
        return try jsonResponse()
    }

    /// `{"error": {"code", "message"}}` with the status above.
    func jsonResponse() throws -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if code == .unauthorized { headers[.wwwAuthenticate] = "Bearer realm=\"ModelDepot\"" }
        // The body announced is not read: close, rather than read gigabytes (or wait for bytes a
        // client that lied will never send) before the connection's next request.
        if code == .payloadTooLarge || code == .sizeMismatch { headers[.connection] = "close" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: jsonBody)))
    }

    /// `{"error": {"code", "message"}}`: the one body of every error answer, from the router and
    /// from the connection guard (``ConnectionGuard``) alike.
    var jsonBody: [UInt8] {
        (try? JSONResponse.encoder.encode(ErrorBody(error: self))).map(Array.init)
            ?? Array(#"{"error":{"code":"internal_error","message":""}}"#.utf8)
    }
}

/// A `429` with `Retry-After`: the client failed to authenticate too often (``AuthenticationThrottle``).
struct ThrottledError: HTTPResponseError {
    let wait: Duration

    var error: DepotError {
        DepotError(
            .tooManyRequests,
            "Too many failed authentications from this address or for this key; try again in \(seconds) s. Check the key: it may be revoked or mistyped."
        )
    }

    var status: HTTPResponse.Status { .tooManyRequests }

    /// Whole seconds, rounded up.
    var seconds: Int64 { wait.components.seconds + (wait.components.attoseconds > 0 ? 1 : 0) }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try error.response(from: request, context: context)
        response.headers[.retryAfter] = String(seconds)
        return response
    }
}
