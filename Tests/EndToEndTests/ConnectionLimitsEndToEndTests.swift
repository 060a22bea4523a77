import Crypto
import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// Clients that hold connections without finishing requests, against a real `depot serve` with
/// 1-second timeouts: heads never finished get `408`, oversized heads `431`, unreadable ones a
/// JSON `400`, stalled bodies,
/// idle keep-alives and readers that stop reading are closed, while a slow reader that keeps
/// reading gets its whole file; one connection beyond the maximum gets `503`.
@Suite struct ConnectionLimitsEndToEndTests {
    /// The socket-level clients, each sending its bytes through the raw test client.
    enum Client {
        /// 20 heads never finished, one of 20 KB and one whose `Content-Length` is not a number.
        case heads
        /// Heads of 1,000 and of 1,001 fields.
        case fields
        /// A request, then nothing on the keep-alive connection.
        case idle
        /// An upload refused (wrong token) before its body, then its body.
        case early
        /// An upload whose body stops after 10 of 100,000 bytes.
        case body(token: String)
        /// A download read at a slow but steady pace.
        case slow(token: String, blob: String)
        /// A download never read, with a 4 KiB receive buffer.
        case stalled(token: String, blob: String)
        /// An upload announcing 256 TB.
        case oversized(token: String)
        /// `held` connections kept open, then one more.
        case cap(held: Int)
    }

    struct Answers {
        var answers: [String]?
        var seconds: Double?
        var big: String?
        var answer: String?
        var closed: Bool?
        var sha256: String?
        var refused: String?
        var retry: Bool?
        var after: String?
    }

    static func statusLine(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.prefix { $0 != 13 }, as: UTF8.self)
    }

    static func body(_ bytes: [UInt8]) -> [UInt8] {
        guard let end = (0..<max(0, bytes.count - 3)).first(where: { bytes[$0..<($0 + 4)].elementsEqual([13, 10, 13, 10]) }) else {
            return bytes
        }
        return Array(bytes[(end + 4)...])
    }

    func run(_ server: ServerProcess, _ client: Client) async throws -> Answers {
        func connect(receiveBuffer: Int? = nil) throws -> RawHTTPConnection {
            try RawHTTPConnection(port: server.url.port ?? 0, timeout: 30, receiveBuffer: receiveBuffer)
        }
        let started = Date()
        func seconds() -> Double { Date().timeIntervalSince(started) }
        func upload(_ token: String, announcing length: Int) -> String {
            "POST /v1/admin/models/flowers/versions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nContent-Length: \(length)\r\n\r\n"
        }
        switch client {
        case .heads:
            let sockets = try (0..<20).map { _ in try connect() }
            for socket in sockets { try socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Half: ") }
            let answers = sockets.map { Self.statusLine($0.readUntilClosed()) }
            let big = try connect()
            try big.send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 20_000) + "\r\n\r\n")
            let bad = try connect()
            try bad.send("POST /v1/admin/models HTTP/1.1\r\nHost: x\r\nContent-Length: B7\r\n\r\n")
            let malformed = bad.readUntilClosed()
            let elapsed = seconds()
            return Answers(
                answers: answers, seconds: elapsed, big: Self.statusLine(big.readUntilClosed()),
                answer: Self.statusLine(malformed) + " " + String(decoding: Self.body(malformed), as: UTF8.self))
        case .fields:
            var answers: [String] = []
            for count in [1_000, 1_001] {
                let socket = try connect()
                try socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\n" + String(repeating: "X-F: 1\r\n", count: count - 1) + "\r\n")
                let data = count > 1_000 ? socket.readUntilClosed() : try socket.receiveSome()
                answers.append(Self.statusLine(data) + " " + (count > 1_000 ? String(decoding: Self.body(data), as: UTF8.self) : ""))
            }
            return Answers(answers: answers)
        case .idle:
            let socket = try connect()
            try socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            return Answers(seconds: seconds(), answer: Self.statusLine(socket.readUntilClosed()))
        case .body(let token):
            let socket = try connect()
            try socket.send(upload(token, announcing: 100_000) + "0123456789")
            let answer = Self.statusLine(socket.readUntilClosed())
            return Answers(seconds: seconds(), answer: answer)
        case .slow(let token, let blob), .stalled(let token, let blob):
            let stalled = if case .stalled = client { true } else { false }
            let socket = try connect(receiveBuffer: stalled ? 4_096 : nil)
            try socket.send("GET \(blob) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n")
            guard !stalled else {
                let closed = await eventually(within: 30) {
                    await (try? server.metric(#"depot_connections_closed_total{reason="send_timeout"}"#)) == 1
                }
                return Answers(closed: closed)
            }
            let data = socket.readUntilClosed(pausing: 0.02)
            return Answers(answer: Self.statusLine(data), sha256: SHA256.hash(data: Self.body(data)).hex)
        case .early:
            let socket = try connect()
            try socket.send(upload("wrong", announcing: 10))
            let answer = try socket.receiveSome()
            try socket.send("0123456789")
            let sent = Date()
            _ = socket.readUntilClosed()
            return Answers(seconds: Date().timeIntervalSince(sent), answer: Self.statusLine(answer))
        case .oversized(let token):
            let socket = try connect()
            try socket.send(upload(token, announcing: 256_231_449_249_779))
            let answer = Self.statusLine(socket.readUntilClosed())
            return Answers(seconds: seconds(), answer: answer)
        case .cap(let count):
            var held = try (0..<count).map { _ in try connect() }
            for socket in held {
                try socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                _ = try socket.receiveSome()
            }
            let refused = try connect().readUntilClosed()
            held.removeLast()
            var after = ""
            _ = await eventually(within: 5) {
                guard let socket = try? connect(),
                    (try? socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")) != nil
                else { return false }
                after = Self.statusLine(socket.readUntilClosed())
                return after.hasSuffix("200 OK")
            }
            let text = String(decoding: refused, as: UTF8.self)
            return Answers(refused: Self.statusLine(refused), retry: text.contains("Retry-After: 1"), after: after)
        }
    }

    @Test func stalledClientsAreClosedAndSlowOnesServed() async throws {
        let scratch = try Scratch()
        let server = try await ServerProcess(
            storage: scratch.url.appendingPathComponent("storage"),
            arguments: [
                "--head-timeout", "1", "--idle-timeout", "1", "--body-timeout", "1", "--send-timeout", "1",
            ])
        let version = try await server.publishLargeModel(megabytes: 4, seed: 9, in: scratch)
        let blob = "/v1/blobs/sha256/\(version.sha256)"

        let heads = try await run(server, .heads)
        #expect(heads.answers == Array(repeating: "HTTP/1.1 408 Request Timeout", count: 20))
        #expect((heads.seconds ?? 99) < 10, "all twenty closed after about a second")
        #expect(heads.big == "HTTP/1.1 431 Request Header Fields Too Large")
        #expect(
            heads.answer?.hasPrefix(
                #"HTTP/1.1 400 Bad Request {"error":{"code":"bad_request","message":"The request is not valid HTTP/1.1"#) == true,
            "a request the decoder cannot read gets a JSON error: \(heads.answer ?? "")")
        let idle = try await run(server, .idle)
        #expect(idle.answer == "HTTP/1.1 200 OK")
        #expect((idle.seconds ?? 99) < 10, "closed when idle, not at the client's 30 s timeout")
        let early = try await run(server, .early)
        #expect(early.answer == "HTTP/1.1 401 Unauthorized")
        #expect((early.seconds ?? 99) < 10, "answered before its body was sent, then closed when idle")
        let body = try await run(server, .body(token: ServerProcess.adminToken))
        #expect(body.answer == "", "closed without an answer")
        #expect((body.seconds ?? 99) < 10)
        await #expect(
            try Command.depot(["versions", "flowers", "--json"], environment: server.environment).text
                .components(separatedBy: "\"sha256\"").count == 2, "the stalled upload stored nothing")

        let slow = try await run(server, .slow(token: ServerProcess.adminToken, blob: blob))
        #expect(slow.answer == "HTTP/1.1 200 OK")
        #expect(slow.sha256 == version.sha256, "a reader that keeps reading gets every byte")
        await #expect(try run(server, .stalled(token: ServerProcess.adminToken, blob: blob)).closed == true)

        for reason in ["head_timeout", "head_too_large", "idle_timeout", "body_timeout", "send_timeout"] {
            await #expect(try server.metric(#"depot_connections_closed_total{reason="\#(reason)"}"#) >= 1, "\(reason)")
        }
        await #expect(try server.metric(#"depot_connections_closed_total{reason="head_timeout"}"#) == 20)
    }

    @Test func aHeadOfMoreThanAThousandFieldsGets431() async throws {
        let scratch = try Scratch()
        let server = try await ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        let answers = try await #require(try run(server, .fields).answers)
        #expect(answers.first == "HTTP/1.1 200 OK ", "1,000 fields are within the limit")
        let refused = try #require(answers.last)
        #expect(refused.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large"), "\(refused)")
        #expect(
            refused.contains(#""code":"request_head_too_large""#) && refused.contains("more than 1000 header or trailer fields"),
            "\(refused)")
        await #expect(try server.metric(#"depot_connections_closed_total{reason="head_too_large"}"#) == 1)
    }

    @Test func anAnnouncedBodyTooLargeIsRefusedAndTheConnectionClosed() async throws {
        let scratch = try Scratch()
        let server = try await ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        try await Command.depot(["models", "create", "flowers"], environment: server.environment).succeeded()
        let oversized = try await run(server, .oversized(token: ServerProcess.adminToken))
        #expect(oversized.answer == "HTTP/1.1 413 Payload Too Large")
        #expect((oversized.seconds ?? 99) < 10, "closed after the answer, not left waiting for 256 TB")
    }

    @Test func oneConnectionBeyondTheMaximumIsRefused() async throws {
        let scratch = try Scratch()
        let server = try await ServerProcess(storage: scratch.url.appendingPathComponent("storage"), arguments: ["--max-connections", "3"])
        let answers = try await run(server, .cap(held: 3))
        #expect(answers.refused == "HTTP/1.1 503 Service Unavailable")
        #expect(answers.retry == true)
        #expect(answers.after == "HTTP/1.1 200 OK", "a closed connection makes room")
    }
}
