import Foundation

/// The throwaway PostgreSQL server `scripts/test` starts (`scripts/test-postgres`), one new
/// database per caller.
public enum TestPostgres {
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// The server's URL (its `postgres` database), from `DEPOT_TEST_POSTGRES_URL`.
    public static func serverURL() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["DEPOT_TEST_POSTGRES_URL"], !url.isEmpty else {
            throw Unavailable(
                description:
                    "DEPOT_TEST_POSTGRES_URL is not set: run the tests with scripts/test, which starts PostgreSQL (or run `eval \"$(scripts/test-postgres start)\"` first)."
            )
        }
        return url
    }

    /// Creates an empty database and returns its URL.
    public static func freshDatabase() async throws -> String {
        let server = try serverURL()
        let name = "depot_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let created = try await Program.run("psql", [server, "-v", "ON_ERROR_STOP=1", "-qc", "CREATE DATABASE \(name)"])
        guard created.status == 0 else { throw Unavailable(description: "Could not create database \(name): \(created.error)") }
        return server.replacingOccurrences(of: "/postgres?", with: "/\(name)?")
    }

    /// Runs SQL through `psql` and returns what it prints (unaligned, tuples only).
    public static func query(_ url: String, _ sql: String) async throws -> String {
        let result = try await Program.run("psql", [url, "-v", "ON_ERROR_STOP=1", "-Atqc", sql])
        guard result.status == 0 else { throw Unavailable(description: "psql failed on \(sql): \(result.error)") }
        return result.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
