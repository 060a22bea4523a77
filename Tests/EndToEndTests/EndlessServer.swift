import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A hostile HTTP server on 127.0.0.1: it reads a request head, answers `head`, then writes
/// zeros until the peer closes the connection (or 1 GiB went out). It writes with blocking
/// `send(2)` and counts what the kernel took, so ``sent`` is exactly what left the attacker's
/// process: what the device read, plus what the two sockets' buffers still held when it closed.
final class EndlessServer: Sendable {
    /// Bytes the kernel took from the attacker, body and head, over every connection.
    let sent = Atomic<Int>(0)
    /// Whether a connection ended because the peer closed it (not at the 1 GiB cap).
    let cut = Atomic<Bool>(false)
    let port: Int
    private let listener: Int32
    private let head: [UInt8]

    /// Runs a server answering `head` (the status line and header fields, without the blank
    /// line) for the duration of `body`.
    static func running<T>(head: String, _ body: (EndlessServer) async throws -> T) async throws -> T {
        let server = try EndlessServer(head: head)
        defer { server.stop() }
        return try await body(server)
    }

    private init(head: String) throws {
        self.head = Array((head + "\r\n\r\n").utf8)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 8) == 0 && getsockname(listener, pointer, &length) == 0
            }
        }
        guard listener >= 0, bound else {
            if listener >= 0 { close(listener) }
            throw POSIXError(.EADDRNOTAVAIL)
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in acceptConnections() }.start()
    }

    /// Stops accepting connections: the accept loop's thread ends and closes the listener (closing
    /// it here could close another test's socket that took its number meanwhile).
    private func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
    }

    /// The server's origin.
    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    private func acceptConnections() {
        defer { close(listener) }
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0, errno == EINTR || errno == ECONNABORTED { continue }
            guard connection >= 0 else { return }
            Thread { [self] in answer(connection) }.start()
        }
    }

    private func answer(_ connection: Int32) {
        defer { close(connection) }
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.ends(with: Array("\r\n\r\n".utf8)) {
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0, request.count < 64 << 10 else { return }
            request += buffer[..<count]
        }
        guard write(head, to: connection) else { return }
        let zeros = [UInt8](repeating: 0, count: 64 << 10)
        while sent.load(ordering: .relaxed) < 1 << 30 {
            guard write(zeros, to: connection) else {
                cut.store(true, ordering: .relaxed)
                return
            }
        }
    }

    /// Sends all of `bytes`, counting what the kernel took; false once the peer is gone.
    private func write(_ bytes: [UInt8], to connection: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return false }
            sent.add(count, ordering: .relaxed)
            offset += count
        }
        return true
    }
}

private extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
