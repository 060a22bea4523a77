import Crypto
import Foundation
import ModelDepotShared
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// URLSession and curl against a real server: conditional manifests, ranges, If-Range, 416,
/// and a client that disconnects mid-upload.
@Suite struct HTTPClientEndToEndTests {
    struct Published {
        let server: ServerProcess
        let key: String
        let manifestURL: URL
        let blobURL: URL
        let bytes: [UInt8]
    }

    func publish(_ scratch: Scratch) async throws -> Published {
        let server = try await ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        try await Command.depot(["models", "create", "flowers"], environment: server.environment).succeeded()
        let version = try await Command.depot(
            ["upload", "flowers", Binaries.fixture("float_classifier_labels"), "--publish", "--json"],
            environment: server.environment
        ).decode(ModelVersion.self)
        let key = try await Command.depot(["keys", "create", "--app", "--json"], environment: server.environment).decode(
            CreatedAccessKey.self)
        return Published(
            server: server, key: key.secret,
            manifestURL: server.url.appendingPathComponent("v1/models/flowers/manifest"),
            blobURL: server.url.appendingPathComponent("v1/blobs/sha256/\(version.sha256)"),
            bytes: Array(try Data(contentsOf: URL(fileURLWithPath: Binaries.fixture("float_classifier_labels")))))
    }

    @Test func urlSessionGetsTheManifestThen304AndRanges() async throws {
        let scratch = try Scratch()
        let published = try await publish(scratch)
        let session = URLSession(configuration: .ephemeral)
        var request = URLRequest(url: published.manifestURL)
        request.setValue("Bearer \(published.key)", forHTTPHeaderField: "Authorization")
        request.setValue("ios", forHTTPHeaderField: "Depot-Platform")
        let (body, response) = try await session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 200)
        let manifest = try manifestPayload(body)
        #expect(manifest.sha256 == SHA256.hash(data: published.bytes).hex)
        let etag = try #require(http.value(forHTTPHeaderField: "ETag"))

        request.setValue(etag, forHTTPHeaderField: "If-None-Match")
        let (empty, notModified) = try await session.data(for: request)
        #expect((notModified as? HTTPURLResponse)?.statusCode == 304)
        #expect(empty.isEmpty)

        var range = URLRequest(url: published.blobURL)
        range.setValue("Bearer \(published.key)", forHTTPHeaderField: "Authorization")
        range.setValue("bytes=100-", forHTTPHeaderField: "Range")
        range.setValue("\"\(manifest.sha256)\"", forHTTPHeaderField: "If-Range")
        let (rest, partial) = try await session.data(for: range)
        #expect((partial as? HTTPURLResponse)?.statusCode == 206)
        #expect(Array(rest) == Array(published.bytes[100...]))
    }

    @Test func curlSeesRangesIfRangeAnd416() async throws {
        let scratch = try Scratch()
        let published = try await publish(scratch)
        let auth = ["-H", "Authorization: Bearer \(published.key)"]
        let url = published.blobURL.absoluteString
        let n = published.bytes.count

        let suffix = try await Command.curl(auth + ["-r", "-10", url])
        #expect(Array(suffix.output) == Array(published.bytes[(n - 10)...]))
        let head = try await Command.curl(auth + ["-s", "-D", "-", "-o", "/dev/null", "-H", "Range: bytes=\(n)-", url]).text
        #expect(head.hasPrefix("HTTP/1.1 416"))
        #expect(head.contains("Content-Range: bytes */\(n)"))
        let stale = try await Command.curl(
            auth + ["-w", "%{http_code}", "-o", "/dev/null", "-H", "Range: bytes=0-9", "-H", "If-Range: \"other\"", url])
        #expect(stale.text == "200")
        let multiple = try await Command.curl(
            auth + ["-w", "%{http_code} %{size_download}", "-o", "/dev/null", "-H", "Range: bytes=0-1,4-5", url])
        #expect(multiple.text == "200 \(n)")
        let full = try await Command.curl(auth + [url])
        #expect(SHA256.hash(data: full.output).hex == SHA256.hash(data: published.bytes).hex)
    }

    @Test func clientThatDisconnectsMidUploadLeavesNothingBehind() async throws {
        let scratch = try Scratch()
        let published = try await publish(scratch)
        let server = published.server
        // Promise 1 MB, send 64 KB, hang up.
        do {
            let connection = try RawHTTPConnection(port: server.url.port ?? 0)
            try connection.send(
                Array(
                    ("POST /v1/admin/models/flowers/versions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(ServerProcess.adminToken)\r\n"
                        + "Content-Length: 1048576\r\n\r\n").utf8) + [UInt8](repeating: 0, count: 65_536))
        }
        let metrics = server.url.appendingPathComponent("metrics").absoluteString
        #expect(
            try await eventually { try await Command.curl([metrics]).text.contains(#"depot_uploads_total{result="rejected"} 1"#) })
        let temporary = try FileManager.default.contentsOfDirectory(atPath: server.storage.appendingPathComponent("tmp").path)
        #expect(temporary.isEmpty)
        let versions = try await Command.depot(["versions", "flowers", "--json"], environment: server.environment).decode(
            ModelVersionList.self)
        #expect(versions.versions.count == 1)
    }
}
