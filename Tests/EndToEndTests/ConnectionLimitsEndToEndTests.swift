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
    /// Socket-level clients; each mode prints JSON.
    static let script = """
        import hashlib, json, socket, sys, time
        host, port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
        def connect(receive_buffer=None):
            s = socket.socket()
            if receive_buffer:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
            s.settimeout(30)
            s.connect((host, port))
            return s
        def read_all(s, pause=0):
            data = b""
            while True:
                try:
                    chunk = s.recv(65536)
                except (ConnectionResetError, socket.timeout):
                    break
                if not chunk:
                    break
                data += chunk
                time.sleep(pause)
            return data
        def status(data):
            return data.split(b"\\r\\n", 1)[0].decode()
        if mode == "heads":
            started = time.time()
            sockets = [connect() for _ in range(20)]
            for s in sockets:
                s.sendall(b"GET /healthz HTTP/1.1\\r\\nHost: x\\r\\nX-Half: ")
            answers = [status(read_all(s)) for s in sockets]
            big = connect()
            big.sendall(b"GET /healthz HTTP/1.1\\r\\nHost: x\\r\\nX-Big: " + b"a" * 20000 + b"\\r\\n\\r\\n")
            bad = connect()
            bad.sendall(b"POST /v1/admin/models HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: B7\\r\\n\\r\\n")
            malformed = read_all(bad)
            print(json.dumps({"answers": answers, "seconds": time.time() - started, "big": status(read_all(big)),
                              "answer": status(malformed) + " " + malformed.split(b"\\r\\n\\r\\n", 1)[-1].decode()}))
        elif mode == "fields":
            answers = []
            for count in [1000, 1001]:
                s = connect()
                s.sendall(b"GET /healthz HTTP/1.1\\r\\nHost: x\\r\\n" + b"X-F: 1\\r\\n" * (count - 1) + b"\\r\\n")
                data = read_all(s) if count > 1000 else s.recv(65536)
                answers.append(status(data) + " " + (data.split(b"\\r\\n\\r\\n", 1)[-1].decode() if count > 1000 else ""))
            print(json.dumps({"answers": answers}))
        elif mode == "idle":
            s = connect()
            s.sendall(b"GET /healthz HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
            started = time.time()
            print(json.dumps({"answer": status(read_all(s)), "seconds": time.time() - started}))
        elif mode == "body":
            s = connect()
            s.sendall(("POST /v1/admin/models/flowers/versions HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer " + sys.argv[4]
                       + "\\r\\nContent-Length: 100000\\r\\n\\r\\n").encode() + b"0123456789")
            started = time.time()
            print(json.dumps({"answer": status(read_all(s)), "seconds": time.time() - started}))
        elif mode in ("stalled", "slow"):
            s = connect(4096 if mode == "stalled" else None)
            s.sendall(("GET " + sys.argv[5] + " HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer " + sys.argv[4] + "\\r\\n\\r\\n").encode())
            if mode == "stalled":
                def closed_for_send_timeout():
                    metrics = connect()
                    metrics.sendall(b"GET /metrics HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
                    return b'depot_connections_closed_total{reason="send_timeout"} 1' in read_all(metrics)
                deadline = time.time() + 30
                while not closed_for_send_timeout() and time.time() < deadline:
                    time.sleep(0.1)
                print(json.dumps({"closed": closed_for_send_timeout()}))
            else:
                data = read_all(s, pause=0.02)
                body = data.split(b"\\r\\n\\r\\n", 1)[1]
                print(json.dumps({"answer": status(data), "sha256": hashlib.sha256(body).hexdigest()}))
        elif mode == "early":
            s = connect()
            s.sendall(b"POST /v1/admin/models/flowers/versions HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer wrong\\r\\n"
                      b"Content-Length: 10\\r\\n\\r\\n")
            answer = s.recv(65536)
            s.sendall(b"0123456789")
            started = time.time()
            read_all(s)
            print(json.dumps({"answer": status(answer), "seconds": time.time() - started}))
        elif mode == "oversized":
            s = connect()
            s.sendall(("POST /v1/admin/models/flowers/versions HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer " + sys.argv[4]
                       + "\\r\\nContent-Length: 256231449249779\\r\\n\\r\\n").encode())
            started = time.time()
            print(json.dumps({"answer": status(read_all(s)), "seconds": time.time() - started}))
        elif mode == "cap":
            held = [connect() for _ in range(int(sys.argv[4]))]
            for s in held:
                s.sendall(b"GET /healthz HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
                s.recv(65536)
            refused = connect()
            refused_answer = read_all(refused)
            held.pop().close()
            answer = ""
            for _ in range(100):
                s = connect()
                s.sendall(b"GET /healthz HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
                answer = status(read_all(s))
                if answer.endswith("200 OK"):
                    break
                time.sleep(0.05)
            print(json.dumps({"refused": status(refused_answer), "retry": b"Retry-After: 1" in refused_answer, "after": answer}))
        """

    struct Answers: Decodable {
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

    func run(_ server: ServerProcess, _ mode: String, _ arguments: [String] = []) throws -> Answers {
        let output = try Subprocess.run(
            "python3",
            ["-c", Self.script, server.url.host ?? "127.0.0.1", "\(server.url.port ?? 0)", mode]
                + arguments)
        guard output.status == 0 else { throw E2EFailure("\(mode): \(output.error)") }
        return try JSONDecoder().decode(Answers.self, from: Data(output.text.utf8))
    }

    @Test func stalledClientsAreClosedAndSlowOnesServed() throws {
        let scratch = try Scratch()
        let server = try ServerProcess(
            storage: scratch.url.appendingPathComponent("storage"),
            arguments: [
                "--head-timeout", "1", "--idle-timeout", "1", "--body-timeout", "1", "--send-timeout", "1",
            ])
        let version = try server.publishLargeModel(megabytes: 4, seed: 9, in: scratch)
        let blob = "/v1/blobs/sha256/\(version.sha256)"

        let heads = try run(server, "heads")
        #expect(heads.answers == Array(repeating: "HTTP/1.1 408 Request Timeout", count: 20))
        #expect((heads.seconds ?? 99) < 10, "all twenty closed after about a second")
        #expect(heads.big == "HTTP/1.1 431 Request Header Fields Too Large")
        #expect(
            heads.answer?.hasPrefix(
                #"HTTP/1.1 400 Bad Request {"error":{"code":"bad_request","message":"The request is not valid HTTP/1.1"#) == true,
            "a request the decoder cannot read gets a JSON error: \(heads.answer ?? "")")
        let idle = try run(server, "idle")
        #expect(idle.answer == "HTTP/1.1 200 OK")
        #expect((idle.seconds ?? 99) < 10, "closed when idle, not at the client's 30 s timeout")
        let early = try run(server, "early")
        #expect(early.answer == "HTTP/1.1 401 Unauthorized")
        #expect((early.seconds ?? 99) < 10, "answered before its body was sent, then closed when idle")
        let body = try run(server, "body", [ServerProcess.adminToken])
        #expect(body.answer == "", "closed without an answer")
        #expect((body.seconds ?? 99) < 10)
        #expect(
            try Command.depot(["versions", "flowers", "--json"], environment: server.environment).text
                .components(separatedBy: "\"sha256\"").count == 2, "the stalled upload stored nothing")

        let slow = try run(server, "slow", [ServerProcess.adminToken, blob])
        #expect(slow.answer == "HTTP/1.1 200 OK")
        #expect(slow.sha256 == version.sha256, "a reader that keeps reading gets every byte")
        #expect(try run(server, "stalled", [ServerProcess.adminToken, blob]).closed == true)

        for reason in ["head_timeout", "head_too_large", "idle_timeout", "body_timeout", "send_timeout"] {
            #expect(try server.metric(#"depot_connections_closed_total{reason="\#(reason)"}"#) >= 1, "\(reason)")
        }
        #expect(try server.metric(#"depot_connections_closed_total{reason="head_timeout"}"#) == 20)
    }

    @Test func aHeadOfMoreThanAThousandFieldsGets431() throws {
        let scratch = try Scratch()
        let server = try ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        let answers = try #require(try run(server, "fields").answers)
        #expect(answers.first == "HTTP/1.1 200 OK ", "1,000 fields are within the limit")
        let refused = try #require(answers.last)
        #expect(refused.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large"), "\(refused)")
        #expect(
            refused.contains(#""code":"request_head_too_large""#) && refused.contains("more than 1000 header or trailer fields"),
            "\(refused)")
        #expect(try server.metric(#"depot_connections_closed_total{reason="head_too_large"}"#) == 1)
    }

    @Test func anAnnouncedBodyTooLargeIsRefusedAndTheConnectionClosed() throws {
        let scratch = try Scratch()
        let server = try ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        try Command.depot(["models", "create", "flowers"], environment: server.environment).succeeded()
        let oversized = try run(server, "oversized", [ServerProcess.adminToken])
        #expect(oversized.answer == "HTTP/1.1 413 Payload Too Large")
        #expect((oversized.seconds ?? 99) < 10, "closed after the answer, not left waiting for 256 TB")
    }

    @Test func oneConnectionBeyondTheMaximumIsRefused() throws {
        let scratch = try Scratch()
        let server = try ServerProcess(storage: scratch.url.appendingPathComponent("storage"), arguments: ["--max-connections", "3"])
        let answers = try run(server, "cap", ["3"])
        #expect(answers.refused == "HTTP/1.1 503 Service Unavailable")
        #expect(answers.retry == true)
        #expect(answers.after == "HTTP/1.1 200 OK", "a closed connection makes room")
    }
}
