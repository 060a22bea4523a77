import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ModelDepot
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An attacker on the path between the SDK and a real `depot serve`: an HTTP server on
/// 127.0.0.1 that passes every request through to the real server, except the paths a test
/// takes over. It sees the real answers (it can record and replay them) but holds none of the
/// server's keys unless a test hands it a stolen one.
final class AttackerProxy: Sendable {
    /// What the attacker answers for a path instead of the real server.
    enum Answer: Sendable {
        case response(status: HTTPResponse.Status, headers: [String: String], body: Data)
        /// The head, then `body` one piece of `piece` bytes every `interval`.
        case drip(status: HTTPResponse.Status, headers: [String: String], body: Data, piece: Int, interval: Duration)
        /// The head (announcing a body), then the connection is closed.
        case closeAfterHead(status: HTTPResponse.Status, headers: [String: String])
        /// The real server's answer for another path, with extra request headers (a CDN in front of it).
        case upstream(path: String, adding: [String: String])
    }

    let upstream: URL
    private let answers = Mutex<[String: Answer]>([:])
    private let portValue = Atomic<Int>(0)
    private let seen = Mutex<[String: HTTPFields]>([:])
    /// Paths whose next requests pass, and whose request after those waits until released.
    private let holds = Mutex<[String: (passing: Int, waiting: CheckedContinuation<Void, Never>?, released: Bool, once: Bool)]>([:])

    private init(upstream: URL) { self.upstream = upstream }

    /// The proxy's address, for the SDK's `serverURL`.
    var url: URL { URL(string: "http://127.0.0.1:\(portValue.load(ordering: .relaxed))")! }

    /// Answers `path` (without the query) with `answer` from now on.
    func take(_ path: String, _ answer: Answer) { answers.withLock { $0[path] = answer } }

    /// The headers of the last request for `path` (what the attacker learns from it).
    func lastHeaders(_ path: String) -> HTTPFields? { seen.withLock { $0[path] } }

    /// Lets `passing` requests for `path` through, then makes the next one wait for ``release(held:)``;
    /// with `once`, the requests after the held one pass (a connection that hung while others work).
    func hold(_ path: String, after passing: Int, once: Bool = false) { holds.withLock { $0[path] = (passing, nil, false, once) } }

    /// Whether a request for `path` is being held now.
    func isHolding(_ path: String) -> Bool { holds.withLock { $0[path]?.waiting != nil } }

    /// Lets the held request for `path` go on.
    func release(held path: String) {
        let waiting = holds.withLock { holds -> CheckedContinuation<Void, Never>? in
            holds[path]?.released = true
            defer { holds[path]?.waiting = nil }
            return holds[path]?.waiting
        }
        waiting?.resume()
    }

    /// Passes `path` through again.
    func release(_ path: String) { answers.withLock { _ = $0.removeValue(forKey: path) } }

    /// Runs a proxy in front of `upstream` for the duration of `body`.
    static func running<T: Sendable>(in front: URL, _ body: (AttackerProxy) async throws -> T) async throws -> T {
        let proxy = AttackerProxy(upstream: front)
        let router = Router()
        router.get("**") { request, _ in try await proxy.respond(to: request) }
        let (ports, reported) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "attacker")
        logger.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { reported.yield($0.localAddress?.port ?? 0) }, logger: logger)
        return try await withThrowingTaskGroup(of: Void.self, returning: T.self) { group in
            group.addTask { try await app.run() }
            var iterator = ports.makeAsyncIterator()
            proxy.portValue.store(await iterator.next() ?? 0, ordering: .relaxed)
            defer { group.cancelAll() }
            return try await body(proxy)
        }
    }

    /// What the real server answers for a GET (what the attacker can observe and record), read
    /// through the platform's default transport: the proxy's handlers are cancelled when a test
    /// ends, and FoundationNetworking traps when a cancel meets a task that has just completed.
    func forward(_ pathAndQuery: String, headers: [String: String]) async throws -> (status: Int, headers: [String: String], body: Data) {
        var request = URLRequest(url: URL(string: pathAndQuery, relativeTo: upstream)!.absoluteURL)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, http) = try await defaultModelTransport().data(for: request, limits: TransferLimits(maximumBytes: 1 << 30))
        var fields: [String: String] = [:]
        for case let (name as String, value as String) in http.allHeaderFields { fields[name] = value }
        return (http.statusCode, fields, data)
    }

    private func respond(to request: Request) async throws -> Response {
        seen.withLock { $0[request.uri.path] = request.headers }
        await waitIfHeld(request.uri.path)
        switch answers.withLock({ $0[request.uri.path] }) {
        case .response(let status, let headers, let body)?:
            return Response(status: status, headers: Self.fields(headers), body: .init(byteBuffer: ByteBuffer(bytes: body)))
        case .drip(let status, let headers, let body, let piece, let interval)?:
            return Response(
                status: status, headers: Self.fields(headers.merging(["Content-Length": "\(body.count)"]) { $1 }),
                body: .init { writer in
                    for start in stride(from: 0, to: body.count, by: piece) {
                        try await writer.write(ByteBuffer(bytes: body[start..<min(start + piece, body.count)]))
                        try await Task.sleep(for: interval)
                    }
                    try await writer.finish(nil)
                })
        case .closeAfterHead(let status, let headers)?:
            return Response(
                status: status, headers: Self.fields(headers),
                body: .init { _ in
                    throw CancellationError()
                })
        case .upstream(let path, let adding)?:
            return try await passThrough(request, as: path, adding: adding)
        case nil:
            return try await passThrough(request, as: request.uri.path, adding: [:])
        }
    }

    private func passThrough(_ request: Request, as path: String, adding: [String: String]) async throws -> Response {
        var headers: [String: String] = [:]
        for field in request.headers where !["host", "content-length", "connection"].contains(field.name.canonicalName) {
            headers[field.name.rawName] = field.value
        }
        headers.merge(adding) { $1 }
        let pathAndQuery = request.uri.query.map { path + "?" + $0 } ?? path
        let (status, fields, body) = try await forward(pathAndQuery, headers: headers)
        let kept = fields.filter { !["content-length", "transfer-encoding", "connection", "date", "server"].contains($0.key.lowercased()) }
        return Response(status: .init(code: status), headers: Self.fields(kept), body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    private func waitIfHeld(_ path: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let wait = holds.withLock { holds -> Bool in
                guard let hold = holds[path], !hold.released, !(hold.once && hold.waiting != nil) else { return false }
                if hold.passing > 0 {
                    holds[path]?.passing -= 1
                    return false
                }
                holds[path]?.waiting = continuation
                return true
            }
            if !wait { continuation.resume() }
        }
    }

    private static func fields(_ headers: [String: String]) -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in headers { if let name = HTTPField.Name(name) { fields[name] = value } }
        return fields
    }
}
