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

    func fetch(_ url: URL, _ headers: [String], router: Bool, scratch: Scratch) async throws -> Answer {
        let body = scratch.path("body-\(UUID().uuidString)")
        let output = try await Command.curl(
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

    @Test func fastPathAnswersEqualTheRoutersAndAreCounted() async throws {
        let published = try await PublishedModel()
        let server = published.server
        let key = "Authorization: Bearer \(published.appKey)"
        let manifestURL = server.url.appendingPathComponent("v1/models/flowers/manifest")
        let first = try await fetch(manifestURL, [key], router: true, scratch: published.scratch)
        let etag = try #require(first.headers["etag"])
        let hex = try manifestPayload(first.body).sha256
        let blobURL = server.url.appendingPathComponent("v1/blobs/sha256/\(hex)")
        let requests: [(URL, [String])] = [
            (manifestURL, [key]), (manifestURL, [key, "If-None-Match: \(etag)"]),
            (blobURL, [key]), (blobURL, [key, "Range: bytes=10-99"]), (blobURL, [key, "Range: bytes=-7"]),
            (blobURL, [key, "Range: bytes=100-", "If-Range: \"\(hex)\""]), (blobURL, [key, "Range: bytes=100-", "If-Range: \"other\""]),
        ]
        for (url, headers) in requests {
            let hot = try await fetch(url, headers, router: false, scratch: published.scratch)
            let routed = try await fetch(url, headers, router: true, scratch: published.scratch)
            #expect(hot == routed, "\(url.lastPathComponent) \(headers.dropFirst())")
            #expect(hot.headers["server"] == "ModelDepot")
        }
        await #expect(
            try fetch(blobURL, [key], router: false, scratch: published.scratch).body
                == Data(contentsOf: URL(fileURLWithPath: Binaries.fixture("float_classifier"))))
        await #expect(try fetch(blobURL, [key, "Range: bytes=5000-"], router: false, scratch: published.scratch).status.contains("416"))
        await #expect(
            try fetch(manifestURL, ["Authorization: Bearer wrong"], router: false, scratch: published.scratch).status.contains("401"))

        await #expect(try server.metric(#"depot_http_requests_total{route="/v1/models/{name}/manifest",method="GET",status="200"}"#) == 3)
        await #expect(try server.metric(#"depot_http_requests_total{route="/v1/models/{name}/manifest",method="GET",status="304"}"#) == 2)
        await #expect(try server.metric(#"depot_http_requests_total{route="/v1/blobs/sha256/{hex}",method="GET",status="206"}"#) == 6)
        // The seven successes above and the whole blob went out before the router; 416 and 401 did not.
        await #expect(try server.metric("depot_fast_path_answers_total") == 8)
    }

    static func manifest(_ key: String) -> String {
        "GET /v1/models/flowers/manifest HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\n\r\n"
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        let published = try await PublishedModel()
        let port = published.server.url.port ?? 0
        let warm = try RawHTTPConnection(port: port)
        try warm.send(Self.manifest(published.appKey))
        _ = try warm.answers(1)
        let connection = try RawHTTPConnection(port: port)
        try connection.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" + Self.manifest(published.appKey))
        let answers = try connection.answers(2)
        #expect(answers.map(\.status) == [200, 200])
        #expect(answers.first?.text.contains("depot_http_requests_total") == true, "the router's answer to the first request comes first")
        #expect(answers.last?.text.contains("\"payload\"") == true)
    }

    /// A connection encodes each answer into the last one's buffer once that is written: answers
    /// sent one at a time and pipelined each carry their own installation's exposure token, and a
    /// `200` between `304`s its whole body.
    @Test func eachAnswerCarriesItsOwnFieldsOneAtATimeAndPipelined() async throws {
        let published = try await PublishedModel()
        let port = published.server.url.port ?? 0
        func check(_ installation: String, _ etag: String?) -> String {
            "GET /v1/models/flowers/manifest HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(published.appKey)\r\n"
                + "Depot-Installation-ID: \(installation)\r\n" + (etag.map { "If-None-Match: \($0)\r\n" } ?? "") + "\r\n"
        }
        func field(_ name: String, _ answer: RawHTTPConnection.Answer) -> String? { answer.fields.first { $0.name == name }?.value }
        let ids = ["0b6c2a9e-5b1d-4c8e-9a7f-0d2e4b6c8a10", "1f3d5b7a-9c2e-4d6f-8a1b-3c5e7a9b1d20"]
        let warm = try RawHTTPConnection(port: port)
        try warm.send(check(ids[0], nil))
        let first = try #require(try warm.answers(1).first)
        let etag = try #require(field("etag", first))
        let connection = try RawHTTPConnection(port: port)
        var alone: [RawHTTPConnection.Answer] = []
        for (id, tag) in [(ids[0], etag), (ids[1], nil), (ids[1], etag), (ids[0], nil)] as [(String, String?)] {
            try connection.send(check(id, tag))
            alone += try connection.answers(1)
        }
        #expect(alone.map(\.status) == [304, 200, 304, 200])
        let tokens = alone.map { field("depot-exposure", $0) }
        #expect(tokens[0] != nil && tokens[1] != nil && tokens[0] != tokens[1], "a token per installation")
        #expect(tokens == [tokens[0], tokens[1], tokens[1], tokens[0]])
        #expect(alone[1].body == first.body && alone[3].body == first.body && alone[0].body.isEmpty)
        try connection.send(check(ids[0], etag) + check(ids[1], nil) + check(ids[1], etag) + check(ids[0], etag))
        let pipelined = try connection.answers(4)
        #expect(pipelined.map(\.status) == [304, 200, 304, 304])
        #expect(pipelined.map { field("depot-exposure", $0) } == [tokens[0], tokens[1], tokens[1], tokens[0]])
        #expect(pipelined.map(\.body) == [[], first.body, [], []])
        #expect(pipelined.map { field("etag", $0) } == Array(repeating: etag, count: 4))
    }

    /// One keep-alive connection: what goes to the router (a manifest not cached yet, a wrong key)
    /// takes only its own request there; the requests after it are answered before the router
    /// again, sent one at a time or pipelined behind it.
    @Test func aConnectionComesBackToTheFastPathOnceTheRouterAnswered() async throws {
        let published = try await PublishedModel()
        let key = published.appKey
        let connection = try RawHTTPConnection(port: published.server.url.port ?? 0)
        var seen: [Int] = []
        for secret in [key, "wrong", key] {
            try connection.send(Self.manifest(secret))
            seen += try connection.answers(1).map(\.status)
        }
        try connection.send(Self.manifest("wrong") + Self.manifest(key) + Self.manifest(key))
        seen += try connection.answers(3).map(\.status)
        #expect(seen == [200, 401, 200, 401, 200, 200])
        // The first manifest needed a load and the 401s are the router's; the other three were answered before it.
        await #expect(try published.server.metric("depot_fast_path_answers_total") == 3)
        await #expect(
            try published.server.metric(#"depot_http_requests_total{route="/v1/models/{name}/manifest",method="GET",status="200"}"#) == 4)
    }

    /// A device that sends its outcome batch on its keep-alive connection keeps its manifest checks
    /// on the fast path: the batch (a body the router reads, whole or in two parts) goes to the
    /// router alone. A body too large for that takes the connection to the router for good.
    @Test func aConnectionComesBackToTheFastPathAfterAnOutcomeBatch() async throws {
        let published = try await PublishedModel()
        let manifest = Array(Self.manifest(published.appKey).utf8)
        let small = Array(#"{"batch":"not-a-uuid","installation":"device-1","events":[]}"#.utf8)
        let connection = try RawHTTPConnection(port: published.server.url.port ?? 0)
        var seen: [Int] = []
        for payload in [manifest, manifest, Self.batch(small, key: published.appKey), manifest] {
            try connection.send(payload)
            seen += try connection.answers(1).map(\.status)
        }
        let split = Self.batch(small, key: published.appKey)
        try connection.send(Array(split.dropLast(20)))
        try connection.send(Array(split.suffix(20)) + manifest)
        seen += try connection.answers(2).map(\.status)
        try connection.send(Self.batch(Array(repeating: UInt8(ascii: " "), count: 70_000) + small, key: published.appKey) + manifest)
        seen += try connection.answers(2).map(\.status)
        #expect(seen == [200, 200, 400, 200, 400, 200, 400, 200])
        // The first manifest needed a load; the next three came before the router, the batches and the last one after it.
        await #expect(try published.server.metric("depot_fast_path_answers_total") == 3)
    }

    /// Outcome batches the SDK sends are answered before the router, once committed, with the
    /// router's answer (`Connection: close` sends a batch to the router); a batch the catalog
    /// refuses is answered by the router with its reason; pipelined requests keep their order.
    /// `POST /v1/models/flowers/events` with `body`, and `Connection: close` when `close`.
    static func batch(_ body: [UInt8], key: String, close: Bool = false) -> [UInt8] {
        Array(
            ("POST /v1/models/flowers/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\n"
                + (close ? "Connection: close\r\n" : "") + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n")
                .utf8) + body
    }

    /// A batch as the SDK writes it: an installation and an app metric for `version`.
    static func outcomes(_ batch: String, version: Int = 1, at now: Int) -> [UInt8] {
        Array(
            (#"{"batch":"\#(batch)","installation":"device-1","dropped":0,"events":["#
                + #"{"metric":"installed","version":\#(version),"arm":"default","at":\#(now)},"#
                + #"{"metric":"accepted","version":\#(version),"arm":"default","at":\#(now),"value":2.5,"count":2}]}"#).utf8)
    }

    /// 150 latencies from another installation: a body of about 12 KB.
    static func largeOutcomes(_ batch: String, at now: Int) -> [UInt8] {
        let events = (0..<150).map { #"{"metric":"inference_latency_ms","version":1,"arm":"default","at":\#(now - $0),"value":12.5}"# }
        return Array(#"{"batch":"\#(batch)","installation":"device-2","dropped":0,"events":[\#(events.joined(separator: ","))]}"#.utf8)
    }

    @Test func outcomeBatchesAreAnsweredBeforeTheRouterWithTheRoutersAnswer() async throws {
        let published = try await PublishedModel()
        let (port, key) = (published.server.url.port ?? 0, published.appKey)
        let now = Int(Date().timeIntervalSince1970)
        func newID() -> String { UUID().uuidString.lowercased() }
        func one(_ body: [UInt8], close: Bool) throws -> RawHTTPConnection.Answer {
            let connection = try RawHTTPConnection(port: port)
            try connection.send(Self.batch(body, key: key, close: close))
            return try #require(try connection.answers(1).first)
        }
        func fieldNames(_ answer: RawHTTPConnection.Answer) -> [String] {
            answer.fields.map(\.name).filter { !["date", "connection"].contains($0) }.sorted()
        }
        func receipt(_ id: String, accepted: Int, duplicate: Bool) -> String {
            #"{"accepted":\#(accepted),"batch":"\#(id)","duplicate":\#(duplicate)}"#
        }
        // The first request with the key, and the first manifest, need a load: the router's.
        let warm = try RawHTTPConnection(port: port)
        try warm.send(Self.manifest(key))
        _ = try warm.answers(1)

        let (fastPathID, routedID) = (newID(), newID())
        let hot = try one(Self.outcomes(fastPathID, at: now), close: false)
        let routed = try one(Self.outcomes(routedID, at: now), close: true)
        #expect(hot.statusLine == "HTTP/1.1 200 OK")
        #expect(fieldNames(hot) == fieldNames(routed))
        #expect(hot.text == receipt(fastPathID, accepted: 2, duplicate: false))
        #expect(routed.text == receipt(routedID, accepted: 2, duplicate: false))
        #expect(try one(Self.outcomes(fastPathID, at: now), close: false).text == receipt(fastPathID, accepted: 0, duplicate: true))
        #expect(try one(Self.outcomes(routedID, at: now), close: true).text == receipt(routedID, accepted: 0, duplicate: true))

        let connection = try RawHTTPConnection(port: port)
        let manifest = Array(Self.manifest(key).utf8)
        try connection.send(
            Self.batch(Self.outcomes(newID(), version: 9, at: now), key: key) + manifest
                + Self.batch(Self.outcomes(newID(), at: now), key: key) + manifest)
        let pipelined = try connection.answers(4)
        #expect(pipelined.map(\.status) == [400, 200, 200, 200])
        #expect(pipelined[0].text.contains("version 9"), "the router's reason: \(pipelined[0].text)")
        #expect(pipelined[1].text.contains("payload"), "the manifest after the refused batch")
        #expect(pipelined[2].text.contains(#""accepted":2"#))

        // Right after a batch was written, a batch of 12 KB waits for the writer's next group (until no batch
        // has arrived for 3 ms); another and a manifest sent meanwhile are more than a head's worth behind it
        // (when they arrive in a read of their own: the test cannot force that).
        try connection.send(Self.batch(Self.outcomes(newID(), at: now), key: key))
        _ = try connection.answers(1)
        try connection.send(Self.batch(Self.largeOutcomes(newID(), at: now), key: key))
        try connection.send(Self.batch(Self.largeOutcomes(newID(), at: now), key: key) + manifest)
        let large = try connection.answers(3)
        #expect(large.map(\.status) == [200, 200, 200])
        #expect(
            large.prefix(2).allSatisfy { $0.text.contains(#""accepted":150"#) && $0.text.contains(#""duplicate":false"#) },
            "each large batch applied once, by the fast path: \(large.prefix(2).map(\.text))")

        // Three batches applied (one hot, one routed, one pipelined), each counted once per installation.
        let results = try await Command.depot(["experiment", "show", "flowers", "--json"], environment: published.server.environment).text
        #expect(results.contains("\"accepted\""), "the app metric was recorded: \(results.prefix(200))")
        await #expect(
            try published.server.metric(#"depot_http_requests_total{route="/v1/models/{name}/events",method="POST",status="200"}"#) == 8)
        await #expect(
            try published.server.metric(#"depot_http_requests_total{route="/v1/models/{name}/manifest",method="GET",status="200"}"#) == 4)
        await #expect(
            try published.server.metric(#"depot_http_requests_total{route="/v1/models/{name}/events",method="POST",status="400"}"#) == 1)
        // Before the router: the six batches not sent with `Connection: close` or refused, and the three manifests after the first.
        let fast = try await published.server.metric("depot_fast_path_answers_total")
        #expect(fast == 9, "\(fast)")
    }

    @Test func sigtermLetsAHotDownloadFinish() async throws {
        let scratch = try Scratch()
        let server = try await ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        let version = try await server.publishLargeModel(megabytes: 8, seed: 5, in: scratch)
        let url = "\(server.url.absoluteString)/v1/blobs/sha256/\(version.sha256)"
        let key = "Authorization: Bearer \(ServerProcess.adminToken)"
        await #expect(try Command.curl(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-H", key, "-r", "0-0", url]).text == "206")
        let download = try await RunningProgram.start(
            "curl", ["-sS", "--fail", "--limit-rate", "2M", "-H", key, "-o", scratch.path("download"), url])
        await #expect(
            eventually {
                ((try? FileManager.default.attributesOfItem(atPath: scratch.path("download"))[.size] as? NSNumber)?.intValue ?? 0) > 0
            })

        #expect(try await server.stop(signal: SIGTERM) == 0)
        #expect(try await download.exit() == 0)
        #expect(try SHA256.digest(ofFileAt: scratch.path("download")).hex == version.sha256)
    }

    @Test func clientsThatLeaveMidRequestLeaveNoOpenFiles() async throws {
        let published = try await PublishedModel()
        let server = published.server
        let manifest = try await Command.curl([
            "-sS", "-H", "Authorization: Bearer \(published.appKey)",
            server.url.appendingPathComponent("v1/models/flowers/manifest").absoluteString,
        ]).manifest()
        let descriptors = "/proc/\(server.process.processIdentifier)/fd"
        let before = try FileManager.default.contentsOfDirectory(atPath: descriptors).count
        // Three pipelined downloads and a hang-up before reading any answer: the handler has
        // opened the blob for the first and holds the others; half of the clients reset the connection.
        let download = "GET /v1/blobs/sha256/\(manifest.sha256) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(published.appKey)\r\n\r\n"
        for client in 0..<40 {
            let connection = try RawHTTPConnection(port: server.url.port ?? 0)
            if client.isMultiple(of: 2) { connection.resetOnClose() }
            try connection.send(String(repeating: download, count: 3))
        }
        #expect(
            await eventually(within: 10) {
                ((try? FileManager.default.contentsOfDirectory(atPath: descriptors).count) ?? .max) <= before + 2
            },
            "descriptors: \(before) before, \((try? FileManager.default.contentsOfDirectory(atPath: descriptors).count) ?? -1) after")
    }
}
