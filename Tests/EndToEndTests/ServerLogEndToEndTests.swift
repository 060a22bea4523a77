import Foundation
import ModelDepotShared
import Testing

/// `depot serve` as shipped (log level `info`): a line per request, whichever path answered it,
/// written by the request log's own task and flushed on SIGTERM; a failure of the server's own
/// names a request id in its body and keeps its cause (paths, system errors) in the log.
@Suite struct ServerLogEndToEndTests {
    @Test func everyRequestHasALineAndAFailureKeepsItsCauseInTheLog() async throws {
        let scratch = try Scratch()
        let storage = scratch.url.appendingPathComponent("storage")
        let logFile = scratch.url.appendingPathComponent("server.log")
        let server = try await ServerProcess(storage: storage, log: logFile)
        try await Command.depot(["models", "create", "flowers"], environment: server.environment).succeeded()
        try await Command.depot(["upload", "flowers", Binaries.fixture("float_classifier"), "--publish"], environment: server.environment)
            .succeeded()
        let appKey = try await Command.depot(["keys", "create", "--app", "--json"], environment: server.environment)
            .decode(CreatedAccessKey.self).secret
        let manifestURL = server.url.appendingPathComponent("v1/models/flowers/manifest").absoluteString
        for _ in 0..<3 {
            await #expect(
                try Command.curl([
                    "-o", scratch.path("manifest"), "-w", "%{http_code}", "-H", "Authorization: Bearer \(appKey)",
                    manifestURL,
                ]).text == "200")
        }
        await #expect(
            try Command.curl(["-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer wrong", manifestURL]).text == "401")

        let signIn = try await Command.curl([
            "-o", "/dev/null", "-D", "-", "--data-urlencode", "token=\(ServerProcess.adminToken)",
            server.url.appendingPathComponent("console/sign-in").absoluteString,
        ])
        let session = try #require(signIn.text.firstMatch(of: #/depot_console=([0-9a-f]{64})/#)?.1, "\(signIn.text)")
        await #expect(
            try Command.curl([
                "-o", "/dev/null", "-w", "%{http_code}", "-H", "Cookie: depot_console=\(session)",
                server.url.appendingPathComponent("console/models").absoluteString,
            ]).text == "200")

        try FileManager.default.removeItem(at: storage.appendingPathComponent("tmp"))
        let failed = try await Command.depot(
            ["upload", "flowers", Binaries.fixture("float_classifier_labels")], environment: server.environment)
        #expect(failed.status == 2, "\(failed.error)")
        let requestID = try #require(failed.error.firstMatch(of: #/request id ([0-9a-f]+)/#)?.1, "\(failed.error)")
        #expect(!failed.error.contains(storage.path), "a path in the answer: \(failed.error)")

        // A blob cut short on disk: the fast path leaves it to the router, which refuses to send it.
        let manifest = try manifestPayload(try Data(contentsOf: URL(fileURLWithPath: scratch.path("manifest"))))
        let blob = storage.appendingPathComponent("blobs/sha256/\(manifest.sha256.prefix(2))/\(manifest.sha256)")
        try Data(try Data(contentsOf: blob).dropLast()).write(to: blob)
        let blobURL = server.url.appendingPathComponent("v1/blobs/sha256/\(manifest.sha256)").absoluteString
        let damaged = try await Command.curl([
            "-o", scratch.path("damaged"), "-w", "%{http_code}", "-H", "Authorization: Bearer \(appKey)", blobURL,
        ])
        #expect(damaged.text == "500")
        #expect(try await server.stop(signal: SIGTERM) == 0)

        let lines = try String(contentsOf: logFile, encoding: .utf8).split(separator: "\n")
        let manifestLines = lines.filter { $0.contains(" path=/v1/models/flowers/manifest ") }
        #expect(
            manifestLines.filter { $0.contains(" status=200 ") && $0.contains(" route=/v1/models/{name}/manifest ") }.count == 3,
            "\(manifestLines)")
        #expect(manifestLines.filter { $0.contains(" status=401 ") && $0.contains(" error=unauthorized ") }.count == 1, "\(manifestLines)")
        #expect(manifestLines.allSatisfy { $0.contains(" info depot: duration_ms=") && $0.hasSuffix(" [ModelDepotServer] request") })
        let failure = lines.filter { $0.contains(String(requestID)) }
        #expect(failure.contains { $0.contains(" status=500 ") && $0.contains(" method=POST ") }, "\(failure)")
        let console = try #require(lines.first { $0.contains(" path=/console/models ") && $0.contains(" status=200 ") }, "\(lines)")
        let adminKey = try #require(console.firstMatch(of: #/ key=(\S+) /#)?.1, "a console action names its key: \(console)")
        #expect(
            failure.contains { $0.contains(" status=500 ") && $0.contains(" key=\(adminKey) ") },
            "the API names the same admin key: \(failure)")
        #expect(failure.contains { $0.contains("cause=") && $0.contains(storage.path) }, "the log names the cause: \(failure)")
        #expect(
            lines.contains { $0.contains("error") && $0.contains("\(manifest.sha256)") && $0.contains("changed outside the server") },
            "the log names the damaged blob")
        #expect(lines.contains { $0.contains(" path=/v1/blobs/sha256/\(manifest.sha256) ") && $0.contains(" status=500 ") })
    }
}
