import Crypto
import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// Uploads whose digest follows the body as an HTTP/1.1 trailer (`Trailer: Depot-Content-SHA256`
/// after a chunked body): what `depot upload` sends, and what the real server does with it.
@Suite struct UploadTrailerEndToEndTests {
    /// Sends `file` in two chunks with the digest given as a trailer; prints the answer's status
    /// line and body.
    static let chunkedClient = """
        import socket, sys
        host, port, token, path, digest, size = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
        data = open(path, "rb").read()
        half = len(data) // 2
        head = ("POST /v1/admin/models/flowers/versions HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer %s\\r\\n"
                "Transfer-Encoding: chunked\\r\\nTrailer: Depot-Content-SHA256\\r\\nConnection: close\\r\\n" % token)
        if size != "-":
            head += "Depot-Content-Length: %s\\r\\n" % size
        body = b"".join(b"%x\\r\\n" % len(part) + part + b"\\r\\n" for part in (data[:half], data[half:]))
        body += b"0\\r\\nDepot-Content-SHA256: " + digest.encode() + b"\\r\\n\\r\\n"
        s = socket.create_connection((host, port), timeout=30)
        s.sendall((head + "\\r\\n").encode() + body)
        answer = b""
        while True:
            chunk = s.recv(65536)
            if not chunk: break
            answer += chunk
        head, _, payload = answer.partition(b"\\r\\n\\r\\n")
        print(head.split(b"\\r\\n")[0].decode())
        print(payload.decode())
        """

    func upload(_ server: ServerProcess, _ file: String, digest: String, size: String = "-") throws -> (status: String, body: String) {
        let url: URL = server.url
        let output = try Subprocess.run(
            "python3",
            [
                "-c", Self.chunkedClient, url.host ?? "", "\(url.port ?? 0)", ServerProcess.adminToken,
                file, digest, size,
            ])
        #expect(output.status == 0, "\(output.error)")
        let lines = output.text.split(separator: "\n", maxSplits: 1).map(String.init)
        return (lines.first ?? "", lines.count > 1 ? lines[1] : "")
    }

    @Test func theServerChecksADigestSentAsATrailer() throws {
        let scratch = try Scratch()
        let server = try ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        try Command.depot(["models", "create", "flowers"], environment: server.environment).succeeded()
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
        #expect(
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
    @Test func pipelinedUploadsAreCheckedAgainstTheirOwnTrailers() throws {
        let scratch = try Scratch()
        let server = try ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        try Command.depot(["models", "create", "flowers"], environment: server.environment).succeeded()
        let script =
            PythonAnswerReader.function + """
                import hashlib, socket
                host, port, token, path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
                data = open(path, "rb").read()
                def upload(digest):
                    return (b"POST /v1/admin/models/flowers/versions HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer %s\\r\\n"
                            b"Transfer-Encoding: chunked\\r\\nTrailer: Depot-Content-SHA256\\r\\n\\r\\n" % token.encode()
                            + b"%x\\r\\n" % len(data) + data + b"\\r\\n0\\r\\nDepot-Content-SHA256: " + digest.encode() + b"\\r\\n\\r\\n")
                right = hashlib.sha256(data).hexdigest()
                s = socket.create_connection((host, port), timeout=30)
                s.sendall(upload(right) + upload("0" * 64) + upload(right))
                answers = read_answers(s, 3)
                print(", ".join(status + (" digest_mismatch" if b"digest_mismatch" in body else "") for status, body in answers))
                """
        let url: URL = server.url
        let output = try Subprocess.run(
            "python3",
            [
                "-c", script, url.host ?? "", "\(url.port ?? 0)", ServerProcess.adminToken,
                Binaries.fixture("float_classifier"),
            ])
        #expect(output.status == 0, "\(output.error)")
        #expect(output.text.trimmingCharacters(in: .whitespacesAndNewlines) == "201, 400 digest_mismatch, 201")
    }

    /// The size announced before the chunked body lets the server refuse a file over its limit
    /// before the file is sent, and the CLI says why.
    @Test func theCLIsUploadOverTheLimitIsRefusedByItsAnnouncedSize() throws {
        let scratch = try Scratch()
        let server = try ServerProcess(storage: scratch.url.appendingPathComponent("storage"), maximumUploadSize: 500)
        try Command.depot(["models", "create", "flowers"], environment: server.environment).succeeded()
        let refused = try Command.depot(["upload", "flowers", Binaries.fixture("float_classifier")], environment: server.environment)
        #expect(refused.status != 0)
        #expect(refused.error.contains("The upload has 992 bytes; this server accepts at most 500"), "\(refused.error)")
        #expect(try server.metric(#"depot_http_requests_total{route="/v1/admin/models/{name}/versions",method="POST",status="413"}"#) == 1)
    }

    /// `depot upload` against a listener that records the request: one chunk of the whole file,
    /// its size announced, and its digest after it as a trailer.
    @Test func theCLISendsTheDigestAsATrailer() throws {
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
        let listener = try Subprocess.start("python3", ["-c", recorder, report])
        defer { listener.terminate() }
        #expect(eventually { FileManager.default.fileExists(atPath: report + ".port") })
        let port = try String(contentsOfFile: report + ".port", encoding: .utf8)
        let file = Binaries.fixture("int8_conv")
        let cli = try Command.depot(
            ["upload", "flowers", file], environment: ["DEPOT_SERVER": "http://127.0.0.1:\(port)", "DEPOT_TOKEN": "t"])
        #expect(cli.status == 1 && cli.error.contains("recorded"), "\(cli.error)")
        _ = listener.waitForExit()

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
