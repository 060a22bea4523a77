import Hummingbird
import ModelDepotShared

/// A complete answer that needs no more work: status, headers and an optional body, or a
/// byte range of a file (sent with `sendfile` by ``HotPathHandler``).
struct HotAnswer: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: ByteBuffer?
    /// A byte range of a file that must still be `identity`; `onStart` runs when sending begins,
    /// `onComplete` once every byte went out.
    var file: (path: String, identity: FileIdentity?, range: ClosedRange<Int>, onStart: @Sendable () -> Void,
               onComplete: @Sendable () -> Void)?

    init(status: HTTPResponse.Status, headers: HTTPFields, body: ByteBuffer?) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    init(status: HTTPResponse.Status, headers: HTTPFields, file path: String, identity: FileIdentity?, range: ClosedRange<Int>,
         onStart: @escaping @Sendable () -> Void, onComplete: @escaping @Sendable () -> Void) {
        self.status = status
        self.headers = headers
        file = (path, identity, range, onStart, onComplete)
    }
}

extension Response {
    /// The router's form of an answer with its body in memory (a file answer is not made here).
    init(_ answer: HotAnswer) {
        self.init(status: answer.status, headers: answer.headers, body: answer.body.map { .init(byteBuffer: $0) } ?? .init())
    }
}
