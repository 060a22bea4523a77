import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// The device path answers from memory: hundreds of manifest `200`s and `304`s and blob
/// downloads against a PostgreSQL catalog run no query at all, counted by `pg_stat_statements`.
@Suite struct DatabaseQueryCountEndToEndTests {
    /// What a replica runs on its own schedule, whatever the traffic: following the other
    /// replicas' changes, flushing usage counts, the pool's keep-alive.
    static let background = [
        "SELECT id, kind, name FROM change_event", "DELETE FROM change_event", "LISTEN", "UNLISTEN",
        "INSERT INTO arm_installation", "INSERT INTO usage", "SELECT $1", "SELECT 1", "BEGIN", "COMMIT",
        "SELECT pg_stat_statements_reset",
    ]

    @Test func cachedManifestsAndBlobsRunNoQuery() async throws {
        let url = try await TestPostgres.freshDatabase()
        _ = try await TestPostgres.query(url, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        let database = try #require(URLComponents(string: url)?.path.dropFirst())
        let published = try await PublishedModel(["float_classifier"], arguments: ["--database", url])
        let server = published.server
        let sha = try await Command.depot(["versions", "flowers", "--json"], environment: server.environment).decode(ModelVersionList.self)
            .versions[0].sha256
        let manifest = "\(server.url.absoluteString)/v1/models/flowers/manifest"
        let blob = "\(server.url.absoluteString)/v1/blobs/sha256/\(sha)"
        let auth = ["-H", "Authorization: Bearer \(published.appKey)", "-H", "Depot-Installation-ID: device-1"]
        let etag = try await Command.curl(["-D", "-", "-o", "/dev/null"] + auth + [manifest]).text.split(separator: "\r\n")
            .first { $0.lowercased().hasPrefix("etag:") }.map { $0.dropFirst(5).trimmingCharacters(in: .whitespaces) }
        _ = try await Command.curl(["-o", "/dev/null"] + auth + [blob])

        _ = try await TestPostgres.query(url, "SELECT pg_stat_statements_reset()")
        /// `count` requests of `url` over one connection, their statuses one per line.
        func statuses(_ url: String, _ count: Int, _ headers: [String] = []) async throws -> String {
            try await Command.curl(
                ["-w", "%{http_code}\n"] + auth + headers + Array(repeating: ["-o", "/dev/null", url], count: count).flatMap { $0 }
            ).text
        }
        let codes =
            try await statuses(manifest, 200) + statuses(manifest, 200, ["-H", "If-None-Match: \(try #require(etag))"])
            + statuses(blob, 100)
        let counted = codes.split(separator: "\n").reduce(into: [String: Int]()) { $0[String($1), default: 0] += 1 }
        #expect(counted == ["200": 300, "304": 200])

        let statements = try await TestPostgres.query(
            url,
            """
            SELECT regexp_replace(query, '\\s+', ' ', 'g') || ' x' || calls FROM pg_stat_statements
            WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '\(database)')
            """
        ).split(separator: "\n").map(String.init)
        let perRequest = statements.filter { statement in !Self.background.contains { statement.hasPrefix($0) } }
        #expect(perRequest.isEmpty, "queries during 500 device requests: \(perRequest)")
        #expect(statements.count < 20, "only the background work ran: \(statements)")
    }
}
