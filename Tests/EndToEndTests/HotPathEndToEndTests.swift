import Crypto
import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// Manifests and blobs answered before the router (`HotPathHandler`), against the router's own
/// answers: `Connection: close` sends the same request to the router.
@Suite struct HotPathEndToEndTests {
    /// Status line, the headers that matter, and the body of one curl request.
    struct Answer: Equatable {
        let status: String
        let headers: [String: String]
        let body: Data
    }

    func fetch(_ url: URL, _ headers: [String], router: Bool, scratch: Scratch) throws -> Answer {
        let body = scratch.path("body-\(UUID().uuidString)")
        let output = try Command.curl(["-sS", "-D", "-", "-o", body] + (router ? ["-H", "Connection: close"] : [])
                                      + headers.flatMap { ["-H", $0] } + [url.absoluteString])
        let lines = output.text.split(separator: "\r\n").map(String.init)
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            guard !["date", "connection"].contains(name) else { continue }
            fields[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Answer(status: lines.first ?? "", headers: fields, body: (try? Data(contentsOf: URL(fileURLWithPath: body))) ?? Data())
    }

    @Test func hotAnswersEqualTheRoutersAndAreCounted() throws {
        let published = try PublishedModel()
        let server = published.server
        let key = "Authorization: Bearer \(published.appKey)"
        let manifestURL = server.url.appendingPathComponent("v1/models/flowers/manifest")
        let first = try fetch(manifestURL, [key], router: true, scratch: published.scratch)
        let etag = try #require(first.headers["etag"])
        let hex = try manifestPayload(first.body).sha256
        let blobURL = server.url.appendingPathComponent("v1/blobs/sha256/\(hex)")
        let requests: [(URL, [String])] = [
            (manifestURL, [key]), (manifestURL, [key, "If-None-Match: \(etag)"]),
            (blobURL, [key]), (blobURL, [key, "Range: bytes=10-99"]), (blobURL, [key, "Range: bytes=-7"]),
            (blobURL, [key, "Range: bytes=100-", "If-Range: \"\(hex)\""]), (blobURL, [key, "Range: bytes=100-", "If-Range: \"other\""]),
        ]
        for (url, headers) in requests {
            let hot = try fetch(url, headers, router: false, scratch: published.scratch)
            let routed = try fetch(url, headers, router: true, scratch: published.scratch)
            #expect(hot == routed, "\(url.lastPathComponent) \(headers.dropFirst())")
            #expect(hot.headers["server"] == "ModelDepot")
        }
        #expect(try fetch(blobURL, [key], router: false, scratch: published.scratch).body == Data(contentsOf: URL(fileURLWithPath: Binaries.fixture("float_classifier"))))
        #expect(try fetch(blobURL, [key, "Range: bytes=5000-"], router: false, scratch: published.scratch).status.contains("416"))
        #expect(try fetch(manifestURL, ["Authorization: Bearer wrong"], router: false, scratch: published.scratch).status.contains("401"))

        #expect(try server.metric(#"depot_http_requests_total{route="/v1/models/{name}/manifest",method="GET",status="200"}"#) == 3)
        #expect(try server.metric(#"depot_http_requests_total{route="/v1/models/{name}/manifest",method="GET",status="304"}"#) == 2)
        #expect(try server.metric(#"depot_http_requests_total{route="/v1/blobs/sha256/{hex}",method="GET",status="206"}"#) == 6)
        // The seven successes above and the whole blob went out before the router; 416 and 401 did not.
        #expect(try server.metric("depot_fast_path_answers_total") == 8)
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let published = try PublishedModel()
        let manifest = "GET /v1/models/flowers/manifest HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(published.appKey)\r\n\r\n"
        let script = """
            import socket, sys
            host, port = sys.argv[1], int(sys.argv[2])
            def exchange(payload, responses):
                s = socket.create_connection((host, port), timeout=10)
                s.sendall(payload.encode())
                data = b""
                while data.count(b"HTTP/1.1 ") < responses or not data.endswith(b"}"):
                    try:
                        chunk = s.recv(65536)
                    except socket.timeout:
                        break
                    if not chunk: break
                    data += chunk
                return data.decode()
            exchange(sys.argv[3], 1)
            print(exchange("GET /metrics HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" + sys.argv[3], 2))
            """
        let url: URL = published.server.url
        let output = try Subprocess.run("python3", ["-c", script, url.host ?? "127.0.0.1", "\(url.port ?? 0)", manifest])
        #expect(output.status == 0, "\(output.error)")
        let metrics = try #require(output.text.range(of: "depot_http_requests_total"))
        let envelope = try #require(output.text.range(of: "\"payload\""))
        #expect(metrics.lowerBound < envelope.lowerBound, "the router's answer to the first request comes first")
    }

    /// One keep-alive connection: what goes to the router (a manifest not cached yet, a wrong key)
    /// takes only its own request there; the requests after it are answered before the router
    /// again, sent one at a time or pipelined behind it.
    @Test func aConnectionComesBackToTheFastPathOnceTheRouterAnswered() throws {
        let published = try PublishedModel()
        let script = PythonAnswerReader.function + """
            import socket
            host, port, key = sys.argv[1], int(sys.argv[2]), sys.argv[3]
            def request(secret):
                return ("GET /v1/models/flowers/manifest HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer %s\\r\\n\\r\\n" % secret).encode()
            s = socket.create_connection((host, port), timeout=10)
            seen = []
            for secret in [key, "wrong", key]:
                s.sendall(request(secret))
                seen += [status for status, _ in read_answers(s, 1)]
            s.sendall(request("wrong") + request(key) + request(key))
            seen += [status for status, _ in read_answers(s, 3)]
            print(" ".join(seen))
            """
        let url: URL = published.server.url
        let output = try Subprocess.run("python3", ["-c", script, url.host ?? "127.0.0.1", "\(url.port ?? 0)", published.appKey])
        #expect(output.status == 0, "\(output.error)")
        #expect(output.text.trimmingCharacters(in: .whitespacesAndNewlines) == "200 401 200 401 200 200")
        // The first manifest needed a load and the 401s are the router's; the other three were answered before it.
        #expect(try published.server.metric("depot_fast_path_answers_total") == 3)
        #expect(try published.server.metric(#"depot_http_requests_total{route="/v1/models/{name}/manifest",method="GET",status="200"}"#) == 4)
    }

    /// A device that sends its outcome batch on its keep-alive connection keeps its manifest checks
    /// on the fast path: the batch (a body the router reads, whole or in two parts) goes to the
    /// router alone. A body too large for that takes the connection to the router for good.
    @Test func aConnectionComesBackToTheFastPathAfterAnOutcomeBatch() throws {
        let published = try PublishedModel()
        let script = PythonAnswerReader.function + """
            import socket
            host, port, key = sys.argv[1], int(sys.argv[2]), sys.argv[3]
            manifest = ("GET /v1/models/flowers/manifest HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer %s\\r\\n\\r\\n" % key).encode()
            def batch(body):
                return ("POST /v1/models/flowers/events HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer %s\\r\\n"
                        "Content-Type: application/json\\r\\nContent-Length: %d\\r\\n\\r\\n" % (key, len(body))).encode() + body
            small = b'{"batch":"not-a-uuid","installation":"device-1","events":[]}'
            s = socket.create_connection((host, port), timeout=10)
            seen = []
            for payload in [manifest, manifest, batch(small), manifest]:
                s.sendall(payload)
                seen += [status for status, _ in read_answers(s, 1)]
            split = batch(small)
            s.sendall(split[:len(split) - 20])
            s.sendall(split[len(split) - 20:] + manifest)
            seen += [status for status, _ in read_answers(s, 2)]
            s.sendall(batch(b" " * 70000 + small) + manifest)
            seen += [status for status, _ in read_answers(s, 2)]
            print(" ".join(seen))
            """
        let url: URL = published.server.url
        let output = try Subprocess.run("python3", ["-c", script, url.host ?? "127.0.0.1", "\(url.port ?? 0)", published.appKey])
        #expect(output.status == 0, "\(output.error)")
        #expect(output.text.trimmingCharacters(in: .whitespacesAndNewlines) == "200 200 400 200 400 200 400 200")
        // The first manifest needed a load; the next three came before the router, the batches and the last one after it.
        #expect(try published.server.metric("depot_fast_path_answers_total") == 3)
    }

    @Test func sigtermLetsAHotDownloadFinish() throws {
        let scratch = try Scratch()
        let server = try ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        let version = try server.publishLargeModel(megabytes: 8, seed: 5, in: scratch)
        let url = "\(server.url.absoluteString)/v1/blobs/sha256/\(version.sha256)"
        let key = "Authorization: Bearer \(ServerProcess.adminToken)"
        #expect(try Command.curl(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-H", key, "-r", "0-0", url]).text == "206")
        let download = try Subprocess.start("curl", ["-sS", "--fail", "--limit-rate", "2M", "-H", key, "-o", scratch.path("download"), url])
        #expect(eventually { ((try? FileManager.default.attributesOfItem(atPath: scratch.path("download"))[.size] as? NSNumber)?.intValue ?? 0) > 0 })

        #expect(server.stop(signal: SIGTERM) == 0)
        #expect(download.waitForExit() == 0)
        #expect(try SHA256.digest(ofFileAt: scratch.path("download")).hex == version.sha256)
    }

    @Test func clientsThatLeaveMidRequestLeaveNoOpenFiles() async throws {
        let published = try PublishedModel()
        let server = published.server
        let manifest = try Command.curl(["-sS", "-H", "Authorization: Bearer \(published.appKey)",
                                         server.url.appendingPathComponent("v1/models/flowers/manifest").absoluteString]).manifest()
        let descriptors = "/proc/\(server.process.processIdentifier)/fd"
        let before = try FileManager.default.contentsOfDirectory(atPath: descriptors).count
        // Three pipelined downloads and a hang-up before reading any answer: the handler has
        // opened the blob for the first and holds the others; half of the clients reset the connection.
        let script = """
            import socket, struct, sys
            for i in range(40):
                s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
                if i % 2: s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.sendall(("GET /v1/blobs/sha256/%s HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer %s\\r\\n\\r\\n"
                           % (sys.argv[3], sys.argv[4]) * 3).encode())
                s.close()
            """
        let url: URL = server.url
        let output = try Subprocess.run("python3", ["-c", script, url.host ?? "", "\(url.port ?? 0)", manifest.sha256, published.appKey])
        #expect(output.status == 0, "\(output.error)")
        #expect(await eventually(within: 10) { ((try? FileManager.default.contentsOfDirectory(atPath: descriptors).count) ?? .max) <= before + 2 },
                "descriptors: \(before) before, \((try? FileManager.default.contentsOfDirectory(atPath: descriptors).count) ?? -1) after")
    }
}
