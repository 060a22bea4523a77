import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// A replica whose database or object store goes out of reach while it runs: what needs them
/// gets `503` within seconds, cached manifests keep being answered, and once the link is back
/// the replica serves everything again without a restart.
@Suite struct OutageEndToEndTests {
    /// `scripts/tcp_cut_proxy.py` in front of a host and port: the network link a test cuts. A
    /// cut or a restore returns once the proxy says it took effect.
    final class CutProxy {
        let process: RunningProgram
        let port: Int

        init(host: String, port target: Int) async throws {
            process = try await RunningProgram.start(
                "python3", [Binaries.repository.appendingPathComponent("scripts/tcp_cut_proxy.py").path, host, String(target)])
            guard let port = Int(await process.nextLine() ?? "") else { throw E2EFailure("tcp_cut_proxy.py printed no port") }
            self.port = port
        }

        func cut() async throws { try await signal(SIGUSR1, acknowledged: "cut") }
        func restore() async throws { try await signal(SIGUSR2, acknowledged: "restored") }

        /// Sends `number` and waits for the line the proxy prints once it took effect.
        private func signal(_ number: Int32, acknowledged expected: String) async throws {
            process.send(number)
            let said = await process.nextLine()
            guard said == expected else { throw E2EFailure("tcp_cut_proxy.py said '\(said ?? "nothing")', not '\(expected)'") }
        }
    }

    @Test func lostDatabaseOrStoreGives503CachedManifestsStayAndTheReplicaRecovers() async throws {
        var database = try await #require(URLComponents(string: try TestPostgres.freshDatabase()))
        let databaseLink = try await CutProxy(host: database.host!, port: database.port!)
        database.port = databaseLink.port
        let s3 = try TestS3.settings()
        let store = try #require(URLComponents(string: s3.endpoint))
        let storeLink = try await CutProxy(host: store.host!, port: store.port!)
        var environment = s3.environment
        environment["AWS_ENDPOINT_URL_S3"] = "http://127.0.0.1:\(storeLink.port)"
        let published = try await PublishedModel(
            ["float_classifier"], arguments: ["--database", database.string!, "--blobs", s3.freshURL()],
            environment: environment)
        let server = published.server, admin = server.environment
        let sha = try await Command.depot(["versions", "flowers", "--json"], environment: admin).decode(ModelVersionList.self).versions[0]
            .sha256
        func status(_ path: String, _ headers: [String] = []) async throws -> String {
            try await Command.curl(
                ["-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer \(published.appKey)"]
                    + headers.flatMap { ["-H", $0] } + ["\(server.url.absoluteString)\(path)"]
            ).text
        }
        let manifestPath = "/v1/models/flowers/manifest"
        let etag = try await Command.curl([
            "-D", "-", "-o", "/dev/null", "-H", "Authorization: Bearer \(published.appKey)", "\(server.url.absoluteString)\(manifestPath)",
        ])
        .text.split(separator: "\r\n").first { $0.lowercased().hasPrefix("etag:") }.map {
            String($0.dropFirst(5)).trimmingCharacters(in: .whitespaces)
        }
        await #expect(try status("/v1/blobs/sha256/\(sha)") == "200")

        try await databaseLink.cut()
        await #expect(try status(manifestPath) == "200", "a cached manifest is answered without the database")
        await #expect(try status(manifestPath, ["If-None-Match: \(try #require(etag))"]) == "304")
        let started = Date()
        let listing = try await Command.depot(["models", "list"], environment: admin)
        #expect(listing.status == 2, "\(listing.text) \(listing.error)")
        #expect(listing.error.contains("catalog database"), "\(listing.error)")
        // The catalog's deadline is 10 s and the pool gives up after 60 s: the bound tells them apart
        // with room for a busy machine.
        #expect(Date().timeIntervalSince(started) < 45, "refused within the catalog's deadline, not after the pool gives up")
        await #expect(try status("/readyz") == "503")

        try await storeLink.cut()
        await #expect(try status("/v1/blobs/sha256/\(sha)") == "503", "a blob the store cannot give is a 503")
        await #expect(try status(manifestPath) == "200")

        try await databaseLink.restore()
        try await storeLink.restore()
        let recovered = try await eventually(within: 60) { try await Command.depot(["models", "list"], environment: admin).status == 0 }
        #expect(recovered, "the replica uses the database again without a restart")
        await #expect(try status("/v1/blobs/sha256/\(sha)") == "200")
        await #expect(try status("/readyz") == "200")
    }
}
