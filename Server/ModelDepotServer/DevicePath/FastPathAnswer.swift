import Hummingbird
import ModelDepotShared

/// A complete answer that needs no more work: status, headers and an optional body, or a
/// byte range of a file (sent with `sendfile` by ``FastPathHandler``).
struct FastPathAnswer: Sendable {
    let status: HTTPResponse.Status
    let headers: HTTPFields
    let body: ByteBuffer?
    /// The status line and fields in HTTP/1.1, encoded once for an answer sent many times (a
    /// cached manifest's); ``FastPathAnswerEncoder`` adds `Date` and `Server`.
    let head: ByteBuffer?
    /// The `Depot-Exposure` field of a manifest answer, made per request (``ExposureToken``) and
    /// written after ``head``.
    private(set) var exposure: String?
    /// A byte range of a file that must still be `identity`; `onStart` runs when sending begins,
    /// `onComplete` once every byte went out.
    let file:
        (
            path: String, identity: FileIdentity?, range: ClosedRange<Int>, onStart: @Sendable () -> Void,
            onComplete: @Sendable () -> Void
        )?

    /// - Parameter encoded: Encode the status line and fields now, for an answer kept and sent many times.
    init(status: HTTPResponse.Status, headers: HTTPFields, body: ByteBuffer?, encoded: Bool = false) {
        self.status = status
        self.headers = headers
        self.body = body
        head = encoded ? FastPathAnswerEncoder.head(status: status, headers: headers) : nil
        file = nil
    }

    init(
        status: HTTPResponse.Status, headers: HTTPFields, file path: String, identity: FileIdentity?, range: ClosedRange<Int>,
        onStart: @escaping @Sendable () -> Void, onComplete: @escaping @Sendable () -> Void
    ) {
        self.status = status
        self.headers = headers
        body = nil
        head = nil
        file = (path, identity, range, onStart, onComplete)
    }
}

extension FastPathAnswer {
    /// This answer with `Depot-Exposure: <token>`.
    func exposing(_ token: String) -> FastPathAnswer {
        var answer = self
        answer.exposure = token
        return answer
    }

    /// A JSON answer as every route writes it (``JSONResponse/encoder``): an outcome batch's
    /// receipt is this, from the route and from the fast path.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> FastPathAnswer {
        let body = ByteBuffer(bytes: try JSONResponse.encoder.encode(value))
        return FastPathAnswer(
            status: status, headers: [.contentType: "application/json; charset=utf-8", .contentLength: String(body.readableBytes)],
            body: body)
    }
}

extension Response {
    /// The router's form of an answer with its body in memory (a file answer is not made here).
    init(_ answer: FastPathAnswer) {
        var headers = answer.headers
        if let exposure = answer.exposure { headers[.depotExposure] = exposure }
        self.init(status: answer.status, headers: headers, body: answer.body.map { .init(byteBuffer: $0) } ?? .init())
    }
}
