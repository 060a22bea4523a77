import Crypto
import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// Manifests and blobs answered before the router (`FastPathHandler`), against the router's own
/// answers: `Connection: close` sends the same request to the router.
@Suite struct FastPathEndToEndTests {
    /// Status line, the headers that matter, and the body of one curl request.
    struct Answer: Equatable {
        let status: String
        let headers: [String: String]
        let body: Data
    }

    func fetch(_ url: URL, _ headers: [String], router: Bool, scratch: Scratch) throws -> Answer {
        let body = scratch.path("body-\(UUID().uuidString)")
        let output = try Command.curl(
            ["-sS", "-D", "-", "-o", body] + (router ? ["-H", "Connection: close"] : [])
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

    @Test func fastPathAnswersEqualTheRoutersAndAreCounted() throws {
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
        #expect(
            try fetch(blobURL, [key], router: false, scratch: published.scratch).body
                == Data(contentsOf: URL(fileURLWithPath: Binaries.fixture("float_classifier"))))
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
        let script =
            PythonAnswerReader.function + """
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
        #expect(
            try published.server.metric(#"depot_http_requests_total{route="/v1/models/{name}/manifest",method="GET",status="200"}"#) == 4)
    }

    /// A device that sends its outcome batch on its keep-alive connection keeps its manifest checks
    /// on the fast path: the batch (a body the router reads, whole or in two parts) goes to the
    /// router alone. A body too large for that takes the connection to the router for good.
    @Test func aConnectionComesBackToTheFastPathAfterAnOutcomeBatch() throws {
        let published = try PublishedModel()
        let script =
            PythonAnswerReader.function + """
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

    /// Outcome batches the SDK sends are answered before the router, once committed, with the
    /// router's answer (`Connection: close` sends a batch to the router); a batch the catalog
    /// refuses is answered by the router with its reason; pipelined requests keep their order.
    @Test func outcomeBatchesAreAnsweredBeforeTheRouterWithTheRoutersAnswer() throws {
        let published = try PublishedModel()
        let script =
            PythonAnswerReader.function + """
                import json, socket, time, uuid
                host, port, key = sys.argv[1], int(sys.argv[2]), sys.argv[3]
                now = int(time.time())
                def body(batch, version=1, metric="accepted"):
                    return json.dumps({"batch": batch, "installation": "device-1", "dropped": 0, "events": [
                        {"metric": "installed", "version": version, "arm": "default", "at": now},
                        {"metric": metric, "version": version, "arm": "default", "at": now, "value": 2.5, "count": 2}]}).encode()
                def batch(payload, close=False):
                    return ("POST /v1/models/flowers/events HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer %s\\r\\n%s"
                            "Content-Type: application/json\\r\\nContent-Length: %d\\r\\n\\r\\n"
                            % (key, "Connection: close\\r\\n" if close else "", len(payload))).encode() + payload
                manifest = ("GET /v1/models/flowers/manifest HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer %s\\r\\n\\r\\n" % key).encode()
                def one(payload, close):
                    s = socket.create_connection((host, port), timeout=10)
                    s.sendall(batch(payload, close))
                    data = b""
                    while b"\\r\\n\\r\\n" not in data or len(data.split(b"\\r\\n\\r\\n", 1)[1]) < int(data.lower().split(b"content-length:")[1].split(b"\\r\\n")[0]):
                        chunk = s.recv(65536)
                        if not chunk: sys.exit("closed after %r" % data)
                        data += chunk
                    s.close()
                    head, answer = data.split(b"\\r\\n\\r\\n", 1)
                    lines = head.decode().split("\\r\\n")
                    fields = sorted(l.split(":")[0].lower() for l in lines[1:] if l.split(":")[0].lower() not in ("date", "connection"))
                    return lines[0], fields, json.dumps(json.loads(answer), sort_keys=True)
                # The first request with the key, and the first manifest, need a load: the router's.
                s = socket.create_connection((host, port), timeout=10)
                s.sendall(manifest)
                read_answers(s, 1)
                hot, routed = str(uuid.uuid4()), str(uuid.uuid4())
                results = {"hot": one(body(hot), False), "routed": one(body(routed), True),
                           "hot_again": one(body(hot), False), "routed_again": one(body(routed), True)}
                s = socket.create_connection((host, port), timeout=10)
                s.sendall(batch(body(str(uuid.uuid4()), version=9)) + manifest + batch(body(str(uuid.uuid4()))) + manifest)
                results["pipelined"] = [(status, answer.decode()) for status, answer in read_answers(s, 4)]
                # Right after a batch was written, a batch of 12 KB waits for the writer's next group (until no batch
                # has arrived for 3 ms); another and a manifest sent meanwhile are more than a head's worth behind it
                # (when they arrive in a read of their own: the test cannot force that).
                def large(batch):
                    return json.dumps({"batch": batch, "installation": "device-2", "dropped": 0, "events": [
                        {"metric": "inference_latency_ms", "version": 1, "arm": "default", "at": now - i, "value": 12.5} for i in range(150)]}).encode()
                s.sendall(batch(body(str(uuid.uuid4()))))
                read_answers(s, 1)
                s.sendall(batch(large(str(uuid.uuid4()))))
                s.sendall(batch(large(str(uuid.uuid4()))) + manifest)
                results["large"] = [(status, answer.decode()) for status, answer in read_answers(s, 3)]
                print(json.dumps({"hot_id": hot, "routed_id": routed, **results}))
                """
        let url: URL = published.server.url
        let output = try Subprocess.run("python3", ["-c", script, url.host ?? "127.0.0.1", "\(url.port ?? 0)", published.appKey])
        #expect(output.status == 0, "\(output.error)")
        let answers = try #require(try JSONSerialization.jsonObject(with: Data(output.text.utf8)) as? [String: Any])
        let (fastPathID, routedID) = (answers["hot_id"] as? String ?? "", answers["routed_id"] as? String ?? "")
        func answer(_ name: String) -> (status: String, fields: [String], body: String) {
            let parts = answers[name] as? [Any] ?? []
            return (parts.first as? String ?? "", parts.dropFirst().first as? [String] ?? [], parts.last as? String ?? "")
        }
        func receipt(_ id: String, accepted: Int, duplicate: Bool) -> String {
            #"{"accepted": \#(accepted), "batch": "\#(id)", "duplicate": \#(duplicate)}"#
        }
        #expect(answer("hot").status == "HTTP/1.1 200 OK")
        #expect(answer("hot").fields == answer("routed").fields)
        #expect(answer("hot").body == receipt(fastPathID, accepted: 2, duplicate: false))
        #expect(answer("routed").body == receipt(routedID, accepted: 2, duplicate: false))
        #expect(answer("hot_again").body == receipt(fastPathID, accepted: 0, duplicate: true))
        #expect(answer("routed_again").body == receipt(routedID, accepted: 0, duplicate: true))
        let pipelined = answers["pipelined"] as? [[String]] ?? []
        #expect(pipelined.map { $0.first ?? "" } == ["400", "200", "200", "200"])
        #expect(pipelined.first?.last?.contains("version 9") == true, "the router's reason: \(pipelined.first?.last ?? "")")
        #expect(pipelined.dropFirst().first?.last?.contains("payload") == true, "the manifest after the refused batch")
        #expect(pipelined.dropFirst(2).first?.last?.contains("\"accepted\":2") == true)
        let large = answers["large"] as? [[String]] ?? []
        #expect(large.map { $0.first ?? "" } == ["200", "200", "200"])
        #expect(
            large.prefix(2).allSatisfy {
                $0.last?.contains(#""accepted":150"#) == true && $0.last?.contains(#""duplicate":false"#) == true
            },
            "each large batch applied once, by the fast path: \(large.prefix(2).map { $0.last ?? "" })")

        // Three batches applied (one hot, one routed, one pipelined), each counted once per installation.
        let results = try Command.depot(["experiment", "show", "flowers", "--json"], environment: published.server.environment).text
        #expect(results.contains("\"accepted\""), "the app metric was recorded: \(results.prefix(200))")
        #expect(
            try published.server.metric(#"depot_http_requests_total{route="/v1/models/{name}/events",method="POST",status="200"}"#) == 8)
        #expect(
            try published.server.metric(#"depot_http_requests_total{route="/v1/models/{name}/manifest",method="GET",status="200"}"#) == 4)
        #expect(
            try published.server.metric(#"depot_http_requests_total{route="/v1/models/{name}/events",method="POST",status="400"}"#) == 1)
        // Before the router: the six batches not sent with `Connection: close` or refused, and the three manifests after the first.
        let fast = try published.server.metric("depot_fast_path_answers_total")
        #expect(fast == 9, "\(fast)")
    }

    @Test func sigtermLetsAHotDownloadFinish() throws {
        let scratch = try Scratch()
        let server = try ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        let version = try server.publishLargeModel(megabytes: 8, seed: 5, in: scratch)
        let url = "\(server.url.absoluteString)/v1/blobs/sha256/\(version.sha256)"
        let key = "Authorization: Bearer \(ServerProcess.adminToken)"
        #expect(try Command.curl(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-H", key, "-r", "0-0", url]).text == "206")
        let download = try Subprocess.start(
            "curl", ["-sS", "--fail", "--limit-rate", "2M", "-H", key, "-o", scratch.path("download"), url])
        #expect(
            eventually {
                ((try? FileManager.default.attributesOfItem(atPath: scratch.path("download"))[.size] as? NSNumber)?.intValue ?? 0) > 0
            })

        #expect(server.stop(signal: SIGTERM) == 0)
        #expect(download.waitForExit() == 0)
        #expect(try SHA256.digest(ofFileAt: scratch.path("download")).hex == version.sha256)
    }

    @Test func clientsThatLeaveMidRequestLeaveNoOpenFiles() async throws {
        let published = try PublishedModel()
        let server = published.server
        let manifest = try Command.curl([
            "-sS", "-H", "Authorization: Bearer \(published.appKey)",
            server.url.appendingPathComponent("v1/models/flowers/manifest").absoluteString,
        ]).manifest()
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
        #expect(
            await eventually(within: 10) {
                ((try? FileManager.default.contentsOfDirectory(atPath: descriptors).count) ?? .max) <= before + 2
            },
            "descriptors: \(before) before, \((try? FileManager.default.contentsOfDirectory(atPath: descriptors).count) ?? -1) after")
    }
}
