import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// The rollout's checks against a real `depot serve`, on both backends, with requests written
/// byte by byte on a socket of their own, as anyone holding an admin token could send them:
/// shadowed rules, versions that do not exist or are unpublished, malformed and hostile bodies.
/// Each is refused with its status and a message naming what to fix, and the rollout stays as it
/// was, byte for byte; a request without an installation id gets the rule's control, and a
/// device version that only looks like digits is no version.
@Suite struct RolloutRawRequestsEndToEndTests {
    @Test(arguments: DepotBackend.allCases) func rawRuleChangesAreRefusedAndLeaveTheRolloutAsItWas(_ backend: DepotBackend) async throws {
        let locations = try await backend.freshLocations()
        let published = try await PublishedModel(
            ["float_classifier", "int8_conv"],
            arguments: locations.map { ["--database", $0.database, "--blobs", $0.objectStore] } ?? [],
            environment: locations?.environment ?? [:])
        let server = published.server, port = try #require(server.url.port)
        try await Command.depot(["upload", "flowers", Binaries.fixture("dynamic_batch")], environment: server.environment).succeeded()

        func send(_ method: String, _ path: String, body: [UInt8] = [], token: String = ServerProcess.adminToken, fields: String = "")
            throws -> RawHTTPConnection.Answer
        {
            let connection = try RawHTTPConnection(port: port)
            let head =
                "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\(fields)"
                + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
            try connection.send(Array(head.utf8) + body)
            return try connection.answers(1)[0]
        }
        func rule(_ name: String, _ body: String) throws -> RawHTTPConnection.Answer {
            try send("PUT", "/v1/admin/models/flowers/rollout/rules/\(name)", body: Array(body.utf8))
        }
        func rollout() throws -> [UInt8] { try send("GET", "/v1/admin/models/flowers/rollout").body }

        let main = try rule("main", #"{"conditions":[],"shares":[{"version":1,"basisPoints":9000},{"version":2,"basisPoints":1000}]}"#)
        #expect(main.status == 200, "\(main.text)")
        let before = try rollout()

        let refused: [(name: String, body: [UInt8], status: Int, says: String)] = [
            (
                "abtest", Array(#"{"conditions":[],"shares":[{"version":1,"basisPoints":5000},{"version":2,"basisPoints":5000}]}"#.utf8),
                409, "Rule 'abtest' could never be used: rule 'main' comes before it"
            ),
            (
                "main", Array(#"{"conditions":[],"shares":[{"version":1,"basisPoints":10000},{"version":4,"basisPoints":0}]}"#.utf8), 400,
                "has no published version 4"
            ),
            (
                "main", Array(#"{"conditions":[],"shares":[{"version":1,"basisPoints":9000},{"version":3,"basisPoints":1000}]}"#.utf8), 400,
                "has no published version 3"
            ),
            (
                "main", Array(#"{"conditions":[],"shares":[{"version":1,"basisPoints":1e309}]}"#.utf8), 400,
                "Number 1e309 is not representable"
            ),
            (
                "main", Array(#"{"conditions":[],"shares":[{"version":99999999999999999999,"basisPoints":10000}]}"#.utf8), 400,
                "a number that does not fit its field: 99999999999999999999 at 'shares[0].version'"
            ),
            (
                "main", Array(#"{"conditions":[],"shares":[{"version":1,"basisPoints":10000.5}]}"#.utf8), 400,
                "10000.5 at 'shares[0].basisPoints'"
            ),
            ("main", Array(#"{"conditions":[],"shares":[{"version":1,"basisPoints":-10000}]}"#.utf8), 400, "shares are 0% to 100%"),
            (
                "main",
                Array(
                    #"{"conditions":[],"shares":[{"version":1,"basisPoints":9223372036854775807},{"version":2,"basisPoints":1}]}"#.utf8),
                400, "Version 1 has a share of 9.223372036854776e+16%; shares are 0% to 100%."
            ),
            (
                "main", Array(#"{"conditions":["appVersion>=1\u0301"],"shares":[{"version":1,"basisPoints":10000}]}"#.utf8), 400,
                "is not a version"
            ),
            ("main", Array(#"{"conditions":["platform=ios"],"shares":[{"version":1,"basisPoints":10000}]"#.utf8), 400, "not valid JSON"),
            ("main", [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D], 400, "not valid JSON"),
            ("main", Array(repeating: UInt8(ascii: "["), count: 60_000), 400, "not valid JSON"),
            ("main", Array(repeating: UInt8(ascii: "["), count: 70_000), 413, "larger than 64 KiB"),
            ("main", Array(#"{"conditions":[7],"shares":[{"version":1,"basisPoints":10000}]}"#.utf8), 400, "conditions"),
            ("MAIN%00", Array(#"{"conditions":[],"shares":[{"version":1,"basisPoints":10000}]}"#.utf8), 400, "Rule name"),
        ]
        for attempt in refused {
            let answer = try send("PUT", "/v1/admin/models/flowers/rollout/rules/\(attempt.name)", body: attempt.body)
            let shown = String(decoding: attempt.body, as: UTF8.self)
            #expect(answer.status == attempt.status, "\(shown): \(answer.statusLine) \(answer.text)")
            #expect(answer.text.contains(attempt.says), "\(shown): \(answer.text)")
            #expect(try rollout() == before, "\(shown) changed the rollout")
        }
        let guarded = try send("PUT", "/v1/admin/models/flowers/rollout/guards/nowhere", body: Array(#"{"to":2}"#.utf8))
        #expect(guarded.status == 404 && guarded.text.contains("no rule named 'nowhere'"), "\(guarded.text)")

        // Without an installation id, the rule's control (version 1), every time.
        for _ in 0..<5 {
            let manifest = try send("GET", "/v1/models/flowers/manifest", token: published.appKey)
            #expect(manifest.status == 200)
            #expect(try manifestPayload(Data(manifest.body)).version == 1)
        }

        // A digit with a combining mark (bytes 31 CC 81) is one character between "0" and "9",
        // but no number: it matches no ordering condition, and the server keeps answering.
        let ordered = try rule("main", #"{"conditions":["appVersion>=3.2.0"],"shares":[{"version":1,"basisPoints":10000}]}"#)
        #expect(ordered.status == 200, "\(ordered.text)")
        for (appVersion, expected) in [("1\u{301}", 2), ("3.2.0", 1), ("3\u{301}.2.0", 2), ("\u{661}", 2)] {
            let fields = "Depot-Installation-ID: device-7\r\nDepot-App-Version: \(appVersion)\r\n"
            let manifest = try send("GET", "/v1/models/flowers/manifest", token: published.appKey, fields: fields)
            #expect(manifest.status == 200, "\(Array(appVersion.utf8)): \(manifest.statusLine) \(manifest.text)")
            #expect(
                try manifestPayload(Data(manifest.body)).version == expected,
                "\(Array(appVersion.utf8)) gets the default (the newest published version) unless it is at least 3.2.0")
        }
        #expect(try await server.stop(signal: SIGTERM) == 0)
    }
}
