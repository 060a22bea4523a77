#if os(Linux)
    import AsyncHTTPClient
    import Foundation
    import FoundationNetworking
    import NIOCore
    import NIOHTTP1
    import Synchronization

    /// ``ModelTransport`` over AsyncHTTPClient (SwiftNIO): the default on Linux, where
    /// FoundationNetworking cannot stop a transfer it was told to refuse. Its data tasks read ahead
    /// without limit while the delegate catches up, ignore a `.cancel` disposition, and close the
    /// connection only once their work queue drains (tens of megabytes to a gigabyte later on
    /// loopback). Here the body is read one chunk at a time, only as fast as the SDK takes it, and a
    /// refusal (of the head, of a byte past the limit, of the pace) drops the stream, which closes
    /// the connection at once: what a hostile server gets in is the limit plus the sockets' buffers.
    ///
    /// Redirects come back as they are; bodies are never decompressed; connections are pooled in
    /// one client shared by every transport of the process. A connection that cannot be made fails
    /// at once (AsyncHTTPClient would otherwise try again until its 30-second connect timeout): the
    /// SDK's own retries and a bundled fallback take over without the wait.
    public struct HTTPClientTransport: ModelTransport {
        private static let client: HTTPClient = {
            var configuration = HTTPClient.Configuration(
                redirectConfiguration: .disallow, timeout: .init(connect: .seconds(30)), decompression: .disabled)
            configuration.connectionPool.retryConnectionEstablishment = false
            return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        }()

        /// Creates a transport.
        public init() {}

        public func data(for request: URLRequest, limits: TransferLimits) async throws -> (Data, HTTPURLResponse) {
            let body = Shared(Data())
            let response = try await transfer(request, limits: limits) { chunk in
                body.withLock { $0.append(contentsOf: chunk.readableBytesView) }
            }
            return (body.withLock { $0 }, response)
        }

        public func download(_ request: URLRequest, limits: TransferLimits) async throws -> (URL, HTTPURLResponse) {
            let (file, handle) = try URLSessionTransport.temporaryBodyFile()
            do {
                let response = try await transfer(request, limits: limits) { chunk in
                    try chunk.withUnsafeReadableBytes { try handle.write(contentsOf: $0) }
                }
                try handle.close()
                return (file, response)
            } catch {
                try? handle.close()
                try? FileManager.default.removeItem(at: file)
                throw error
            }
        }

        /// Runs the exchange beside a watchdog of its pace; whichever ends first ends the other.
        private func transfer(
            _ request: URLRequest, limits: TransferLimits,
            into sink: @escaping @Sendable (ByteBuffer) throws -> Void
        ) async throws -> HTTPURLResponse {
            guard let url = request.url else { throw URLError(.badURL) }
            let pace = Shared(Pace(now: .now))
            return try await withThrowingTaskGroup(of: HTTPURLResponse?.self) { group in
                group.addTask {
                    try await Self.exchange(Self.clientRequest(request, url), url: url, limits: limits, pace: pace, sink: sink)
                }
                group.addTask {
                    try await Self.watch(pace, limits)
                    return nil
                }
                defer { group.cancelAll() }
                while let finished = try await group.next() {
                    if let response = finished { return response }
                }
                throw CancellationError()
            }
        }

        private static func exchange(
            _ request: HTTPClientRequest, url: URL, limits: TransferLimits, pace: Shared<Pace>,
            sink: @Sendable (ByteBuffer) throws -> Void
        ) async throws -> HTTPURLResponse {
            let answer: HTTPClientResponse
            do {
                answer = try await client.execute(request, deadline: .distantFuture)
            } catch {
                throw Self.networkError(error, url: url)
            }
            pace.withLock { $0.headArrived(at: ContinuousClock.now) }
            // Repeated fields joined with ", " under the first spelling of their name, as URLSession does.
            var fields: [String: String] = [:]
            var spellings: [String: String] = [:]
            for (name, value) in answer.headers {
                let spelling = spellings[name.lowercased(), default: name]
                spellings[name.lowercased()] = spelling
                fields[spelling] = fields[spelling].map { "\($0), \(value)" } ?? value
            }
            guard
                let response = HTTPURLResponse(url: url, statusCode: Int(answer.status.code), httpVersion: "HTTP/1.1", headerFields: fields)
            else {
                throw URLError(.badServerResponse)
            }
            let limit = try limits.body(response)
            if let announced = answer.headers.first(name: "Content-Length").flatMap(Int.init), announced > limit {
                throw TransferLimitExceeded(limit: limit)
            }
            var received = 0
            do {
                for try await chunk in answer.body {
                    received += chunk.readableBytes
                    guard received <= limit else { throw TransferLimitExceeded(limit: limit) }
                    pace.withLock { $0.arrived(chunk.readableBytes, at: ContinuousClock.now) }
                    try sink(chunk)
                }
            } catch  where error is HTTPClientError || error is HTTPParserError || error is IOError || error is ChannelError {
                // A connection cut inside an announced length or chunk arrives as an HTTPParserError.
                throw Self.networkError(error, url: url)
            }
            return response
        }

        /// Checks the pace every ``TransferLimits/watchdogTick``; throws the limit broken.
        private static func watch(_ pace: Shared<Pace>, _ limits: TransferLimits) async throws {
            while true {
                try await Task.sleep(for: limits.watchdogTick)
                if let failure = pace.withLock({ $0.failure(at: ContinuousClock.now, limits: limits) }) { throw failure }
            }
        }

        private static func clientRequest(_ request: URLRequest, _ url: URL) -> HTTPClientRequest {
            var converted = HTTPClientRequest(url: url.absoluteString)
            converted.method = HTTPMethod(rawValue: request.httpMethod ?? "GET")
            for (name, value) in request.allHTTPHeaderFields ?? [:] { converted.headers.add(name: name, value: value) }
            if let body = request.httpBody { converted.body = .bytes(ByteBuffer(bytes: body)) }
            return converted
        }

        /// A network failure as the `URLError` URLSession would throw, naming NIO's cause.
        private static func networkError(_ error: any Error, url: URL) -> any Error {
            if error is CancellationError || (error as? HTTPClientError) == .cancelled { return CancellationError() }
            let host = "\(url.host ?? "")\(url.port.map { ":\($0)" } ?? "")"
            let clientError = error as? HTTPClientError
            let (code, what): (URLError.Code, String) =
                if clientError == .remoteConnectionClosed || error is HTTPParserError {
                    (.networkConnectionLost, "the connection to \(host) closed before the answer ended (\(error))")
                } else if clientError == .connectTimeout { (.timedOut, "connecting to \(host) timed out") } else if clientError != nil {
                    (.networkConnectionLost, "the exchange with \(host) failed (\(error))")
                } else { (.cannotConnectToHost, "could not connect to \(host) (\(error))") }
            return URLError(code, userInfo: [NSLocalizedDescriptionKey: what, NSURLErrorFailingURLErrorKey: url])
        }
    }

    /// A value several tasks of one transfer change under a lock.
    private final class Shared<Value: Sendable>: Sendable {
        private let value: Mutex<Value>

        init(_ value: Value) { self.value = Mutex(value) }

        func withLock<Result>(_ body: (inout sending Value) throws -> sending Result) rethrows -> sending Result {
            try value.withLock(body)
        }
    }
#endif
