import Foundation

#if canImport(Glibc)
    import Glibc
    private let streamSocket = Int32(SOCK_STREAM.rawValue)
    private let sendFlags = Int32(MSG_NOSIGNAL)
#elseif canImport(Darwin)
    import Darwin
    private let streamSocket = SOCK_STREAM
    private let sendFlags: Int32 = 0
#endif

// The C calls under names that the connection's own members do not shadow.
private func openSocket() -> Int32 { socket(AF_INET, streamSocket, 0) }
private func closeSocket(_ descriptor: Int32) { _ = close(descriptor) }
private func connectSocket(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(descriptor, address, length)
}
private func bindSocket(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    bind(descriptor, address, length)
}
private func sendBytes(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
    send(descriptor, bytes.baseAddress, bytes.count, sendFlags)
}
private func receiveBytes(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
    recv(descriptor, buffer.baseAddress, buffer.count, 0)
}

/// One TCP connection to a server under test that sends exactly the bytes a test writes —
/// pipelined requests, a body split across writes, a promise of more than is sent — as a device's
/// socket or an attacker does, without a client library's tidying; and reads the answers back.
public final class RawHTTPConnection {
    /// One answer: its status, fields (names lower-case, in order) and body.
    public struct Answer: Sendable {
        public let status: Int
        public let statusLine: String
        public let fields: [(name: String, value: String)]
        public let body: [UInt8]

        public var text: String { String(decoding: body, as: UTF8.self) }

        /// The first field named `name` (lower-case), or `nil`.
        public func field(_ name: String) -> String? { fields.first { $0.name == name }?.value }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private let socket: Int32
    /// Bytes read past the answers returned so far.
    private var pending: [UInt8] = []

    /// Connects to `host:port`, from the loopback address `source` when given (127.0.0.0/8 is
    /// all on `lo`: a test is as many clients as it likes); a read waits at most `timeout` for its
    /// next bytes.
    /// `receiveBuffer` sets `SO_RCVBUF` (a small one makes a reader that stops reading fill up
    /// soon).
    /// A failure after the socket is open leaves its closing to `deinit`, which Swift runs for a
    /// class whose initialiser throws once every stored property is set: closing it here as well
    /// closed, a moment later, whatever descriptor had taken its number meanwhile (a crash in NIO,
    /// `getsockname` on a socket another thread had just opened).
    public init(
        host: String = "127.0.0.1", port: Int, from source: String? = nil, timeout: TimeInterval = 10, receiveBuffer: Int? = nil
    ) throws {
        socket = openSocket()
        guard socket >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let source {
            guard var local = Self.address(source, port: 0) else {
                throw Failure(description: "'\(source)' is not an IPv4 address")
            }
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bindSocket(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                throw Failure(description: "binding to \(source): \(String(cString: strerror(errno)))")
            }
        }
        guard var address = Self.address(host, port: port) else {
            throw Failure(description: "'\(host)' is not an IPv4 address")
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connectSocket(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            throw Failure(description: "connecting to \(host):\(port): \(String(cString: strerror(errno)))")
        }
        let microseconds = max(1, Int((timeout * 1_000_000).rounded()))
        var wait = timeval(tv_sec: microseconds / 1_000_000, tv_usec: .init(microseconds % 1_000_000))
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        #if canImport(Darwin)
            var on: Int32 = 1
            setsockopt(socket, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    deinit { closeSocket(socket) }

    private static func address(_ host: String, port: Int) -> sockaddr_in? {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return inet_pton(AF_INET, host, &address.sin_addr) == 1 ? address : nil
    }

    /// One `GET` on a connection of its own from `source`, closed after its answer.
    public static func get(
        _ path: String, port: Int, from source: String? = nil, headers: [(String, String)] = [], timeout: TimeInterval = 10
    ) throws -> Answer {
        let connection = try RawHTTPConnection(port: port, from: source, timeout: timeout)
        let fields = headers.map { "\($0.0): \($0.1)\r\n" }.joined()
        try connection.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(fields)Connection: close\r\n\r\n")
        return try connection.answers(1)[0]
    }

    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { sendBytes(socket, $0) }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { throw Failure(description: "send: \(String(cString: strerror(errno)))") }
            offset += sent
        }
    }

    /// Reads the next `count` answers, each with a `Content-Length` or a chunked body (an answer
    /// with neither has none, as a `304` does); not for answers to `HEAD` or interim `1xx` ones.
    public func answers(_ count: Int) throws -> [Answer] {
        var answers: [Answer] = []
        while answers.count < count {
            let headEnd = try readUntil { Self.find([13, 10, 13, 10], in: $0) }
            let head = String(decoding: pending[..<headEnd], as: UTF8.self)
            pending.removeFirst(headEnd + 4)
            let lines = head.components(separatedBy: "\r\n")
            let fields = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            let statusLine = lines.first ?? ""
            let parts = statusLine.split(separator: " ")
            guard parts.count >= 2, let status = Int(parts[1]) else {
                throw Failure(description: "not an answer after \(answers.map(\.status)): \(statusLine)")
            }
            let chunked = fields.contains { $0.name == "transfer-encoding" && $0.value.lowercased().contains("chunked") }
            let body = try chunked ? chunkedBody() : fixedBody(Int(fields.first { $0.name == "content-length" }?.value ?? "0") ?? 0)
            answers.append(Answer(status: status, statusLine: statusLine, fields: fields, body: body))
        }
        return answers
    }

    /// The next answer, or `nil` when the server closed the connection before sending a byte of
    /// one: what an HTTP client retries on a new connection.
    public func answerUnlessClosed() throws -> Answer? {
        guard try !pending.isEmpty || receive() else { return nil }
        return try answers(1)[0]
    }

    /// The bytes of one read (what is pending first), empty once the server closed the connection.
    public func receiveSome() throws -> [UInt8] {
        if pending.isEmpty { _ = try receive() }
        defer { pending = [] }
        return pending
    }

    /// Every byte until the server closes the connection (or a read waits longer than the
    /// timeout), reading no faster than one read per `pause`: a slow reader's pace.
    public func readUntilClosed(pausing pause: TimeInterval = 0) -> [UInt8] {
        while (try? receive()) == true {
            if pause > 0 { Thread.sleep(forTimeInterval: pause) }
        }
        defer { pending = [] }
        return pending
    }

    /// Makes the close a reset (`SO_LINGER` 0): the server's next read or write on it fails.
    public func resetOnClose() {
        var linger = linger(l_onoff: 1, l_linger: 0)
        setsockopt(socket, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
    }

    private func fixedBody(_ length: Int) throws -> [UInt8] {
        _ = try readUntil { $0.count >= length ? length : nil }
        defer { pending.removeFirst(length) }
        return Array(pending[..<length])
    }

    private func chunkedBody() throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let lineEnd = try readUntil { Self.find([13, 10], in: $0) }
            let line = String(decoding: pending[..<lineEnd], as: UTF8.self)
            guard let size = Int(line.split(separator: ";").first?.trimmingCharacters(in: .whitespaces) ?? "", radix: 16), size >= 0
            else { throw Failure(description: "'\(line)' is not a chunk size") }
            pending.removeFirst(lineEnd + 2)
            if size == 0 {
                // Trailer fields, then the empty line.
                while true {
                    let end = try readUntil { Self.find([13, 10], in: $0) }
                    pending.removeFirst(end + 2)
                    if end == 0 { return body }
                }
            }
            _ = try readUntil { $0.count >= size + 2 ? size : nil }
            guard pending[size] == 13, pending[size + 1] == 10 else {
                throw Failure(description: "a chunk of \(size) bytes does not end its line")
            }
            body += pending[..<size]
            pending.removeFirst(size + 2)
        }
    }

    /// Reads until `found` finds something in what is pending; its result.
    private func readUntil(_ found: ([UInt8]) -> Int?) throws -> Int {
        while true {
            if let index = found(pending) { return index }
            guard try receive() else {
                throw Failure(description: "the server closed the connection with \(pending.count) bytes of an answer pending")
            }
        }
    }

    /// One read; `false` once the server closed the connection (or reset it).
    private func receive() throws -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var count = buffer.withUnsafeMutableBytes { receiveBytes(socket, $0) }
        while count < 0, errno == EINTR { count = buffer.withUnsafeMutableBytes { receiveBytes(socket, $0) } }
        if count < 0, errno == ECONNRESET { return false }
        if count < 0 {
            throw Failure(
                description: errno == EAGAIN || errno == EWOULDBLOCK
                    ? "no answer within the timeout" : "recv: \(String(cString: strerror(errno)))")
        }
        pending += buffer[..<count]
        return count > 0
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        return (0...(bytes.count - needle.count)).first { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
