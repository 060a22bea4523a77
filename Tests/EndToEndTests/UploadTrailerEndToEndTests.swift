import Crypto
import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// Uploads whose digest follows the body as an HTTP/1.1 trailer (`Trailer: Depot-Content-SHA256`
/// after a chunked body): what `depot upload` sends, and what the real server does with it.
@Suite struct UploadTrailerEndToEndTests {
    /// A chunked upload of `parts` with `digest` as its trailer; `size` announced when given.
    static func chunkedUpload(_ parts: [[UInt8]], digest: String, size: String? = nil, close: Bool = false) -> [UInt8] {
        var head =
            "POST /v1/admin/models/flowers/versions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(ServerProcess.adminToken)\r\n"
            + "Transfer-Encoding: chunked\r\nTrailer: Depot-Content-SHA256\r\n"
        if close { head += "Connection: close\r\n" }
        if let size { head += "Depot-Content-Length: \(size)\r\n" }
        var request = Array((head + "\r\n").utf8)
        for part in parts { request += Array((String(part.count, radix: 16) + "\r\n").utf8) + part + Array("\r\n".utf8) }
        return request + Array("0\r\nDepot-Content-SHA256: \(digest)\r\n\r\n".utf8)
    }

    /// Sends `file` in two chunks with the digest given as a trailer: the answer's status line and body.
    func upload(_ server: ServerProcess, _ file: String, digest: String, size: String? = nil) throws -> (status: String, body: String) {
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        let connection = try RawHTTPConnection(port: server.url.port ?? 0, timeout: 30)
        try connection.send(
            Self.chunkedUpload(
                [Array(data[..<(data.count / 2)]), Array(data[(data.count / 2)...])], digest: digest, size: size, close: true))
        let answer = try #require(try connection.answers(1).first)
        return (answer.statusLine, answer.text)
    }

    @Test func theServerChecksADigestSentAsATrailer() async throws {
        let scratch = try Scratch()
        let server = try await ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        try await Command.depot(["models", "create", "flowers"], environment: server.environment).succeeded()
        let file = Binaries.fixture("float_classifier")
        let digest = try SHA256.digest(ofFileAt: file).hex

        let wrong = try upload(server, file, digest: String(repeating: "0", count: 64))
        #expect(wrong.status == "HTTP/1.1 400 Bad Request")
        #expect(wrong.body.contains("\"digest_mismatch\""))
        let malformed = try upload(server, file, digest: "abc")
        #expect(malformed.body.contains("Depot-Content-SHA256 trailer 'abc' is not 64 hexadecimal digits."))
        let size = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int ?? 0
        let cut = try upload(server, file, digest: digest, size: String(size + 10))
        #expect(cut.body.contains("\"size_mismatch\""))
        await #expect(
            try Command.depot(["versions", "flowers", "--json"], environment: server.environment).decode(ModelVersionList.self).versions
                .isEmpty,
            "nothing refused was stored")

        let right = try upload(server, file, digest: digest.uppercased(), size: String(size))
        #expect(right.status == "HTTP/1.1 201 Created")
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        #expect(try decoder.decode(ModelVersion.self, from: Data(right.body.utf8)).sha256 == digest)
    }

    /// Two chunked uploads pipelined on one connection: each is checked against its own trailer,
    /// however far the server has read ahead.
    @Test func pipelinedUploadsAreCheckedAgainstTheirOwnTrailers() async throws {
        let scratch = try Scratch()
        let server = try await ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        try await Command.depot(["models", "create", "flowers"], environment: server.environment).succeeded()
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Binaries.fixture("float_classifier"))))
        let right = SHA256.hash(data: data).hex
        let connection = try RawHTTPConnection(port: server.url.port ?? 0, timeout: 30)
        try connection.send(
            Self.chunkedUpload([data], digest: right) + Self.chunkedUpload([data], digest: String(repeating: "0", count: 64))
                + Self.chunkedUpload([data], digest: right))
        let answers = try connection.answers(3)
        #expect(answers.map(\.status) == [201, 400, 201])
        #expect(answers[1].text.contains("digest_mismatch"), "\(answers[1].text)")
    }

    /// The size announced before the chunked body lets the server refuse a file over its limit
    /// before the file is sent, and the CLI says why.
    @Test func theCLIsUploadOverTheLimitIsRefusedByItsAnnouncedSize() async throws {
        let scratch = try Scratch()
        let server = try await ServerProcess(storage: scratch.url.appendingPathComponent("storage"), maximumUploadSize: 500)
        try await Command.depot(["models", "create", "flowers"], environment: server.environment).succeeded()
        let refused = try await Command.depot(["upload", "flowers", Binaries.fixture("float_classifier")], environment: server.environment)
        #expect(refused.status != 0)
        #expect(refused.error.contains("The upload has 992 bytes; this server accepts at most 500"), "\(refused.error)")
        await #expect(
            try server.metric(#"depot_http_requests_total{route="/v1/admin/models/{name}/versions",method="POST",status="413"}"#) == 1)
    }

    /// `depot upload` against a listener that records the request: one chunk of the whole file,
    /// its size announced, and its digest after it as a trailer.
    @Test func theCLISendsTheDigestAsATrailer() async throws {
        let scratch = try Scratch()
        let recorder = """
            import hashlib, json, os, socket, sys
            listener = socket.socket()
            listener.bind(("127.0.0.1", 0))
            listener.listen(1)
            # Written whole, then renamed: the test reads the file as soon as it exists.
            open(sys.argv[1] + ".port.tmp", "w").write(str(listener.getsockname()[1]))
            os.replace(sys.argv[1] + ".port.tmp", sys.argv[1] + ".port")
            connection, _ = listener.accept()
            connection.settimeout(30)
            data = b""
            def need(marker):
                global data
                while marker not in data:
                    chunk = connection.recv(1 << 20)
                    if not chunk: sys.exit("closed early")
                    data += chunk
            need(b"\\r\\n\\r\\n")
            head, _, data = data.partition(b"\\r\\n\\r\\n")
            body = b""
            while True:
                need(b"\\r\\n")
                line, _, data = data.partition(b"\\r\\n")
                size = int(line, 16)
                if size == 0: break
                while len(data) < size + 2:
                    data += connection.recv(1 << 20)
                body += data[:size]
                data = data[size + 2:]
            need(b"\\r\\n\\r\\n")
            trailer = data.partition(b"\\r\\n\\r\\n")[0]
            reply = b'{"error":{"code":"bad_request","message":"recorded"}}'
            connection.sendall(b"HTTP/1.1 400 Bad Request\\r\\nContent-Length: %d\\r\\nConnection: close\\r\\n\\r\\n" % len(reply) + reply)
            connection.close()
            json.dump({"head": head.decode().split("\\r\\n"), "body": hashlib.sha256(body).hexdigest(), "trailer": trailer.decode()},
                      open(sys.argv[1], "w"))
            """
        let report = scratch.path("request.json")
        let listener = try await RunningProgram.start("python3", ["-c", recorder, report])
        await #expect(eventually { FileManager.default.fileExists(atPath: report + ".port") })
        let port = try String(contentsOfFile: report + ".port", encoding: .utf8)
        let file = Binaries.fixture("int8_conv")
        let cli = try await Command.depot(
            ["upload", "flowers", file], environment: ["DEPOT_SERVER": "http://127.0.0.1:\(port)", "DEPOT_TOKEN": "t"])
        #expect(cli.status == 1 && cli.error.contains("recorded"), "\(cli.error)")
        try await listener.exit()

        struct Recorded: Decodable {
            let head: [String]
            let body: String
            let trailer: String
        }
        let recorded = try JSONDecoder().decode(Recorded.self, from: Data(contentsOf: URL(fileURLWithPath: report)))
        let digest = try SHA256.digest(ofFileAt: file).hex
        let size = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int ?? 0
        #expect(recorded.head.contains("Transfer-Encoding: chunked"))
        #expect(recorded.head.contains("Trailer: Depot-Content-SHA256"))
        #expect(recorded.head.contains("Depot-Content-Length: \(size)"))
        #expect(!recorded.head.contains { $0.lowercased().hasPrefix("depot-content-sha256") }, "the digest is not in the head")
        #expect(recorded.body == digest)
        #expect(recorded.trailer == "Depot-Content-SHA256: \(digest)")
    }
}
