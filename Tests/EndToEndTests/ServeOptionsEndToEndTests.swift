import Foundation
import TestSupport
import Testing

/// `depot serve`'s options for clients and sessions: a bad value stops it at once, naming the
/// value and the form expected; good ones reach the server.
@Suite struct ServeOptionsEndToEndTests {
    @Test(arguments: [
        (["--trusted-proxy", "10.0.0.0/33"], "10.0.0.0/33"),
        (["--trusted-proxy", "proxy.internal"], "proxy.internal"),
        (["--public-url", "ftp://models.example.com"], "ftp://models.example.com"),
        (["--console-idle-timeout", "5"], "'5'"),
        (["--console-session-lifetime", "99999999999999999999"], "99999999999999999999"),
        (["--max-associated-files-size=-1"], "-1"),
        (["--patch-from", "17"], "must be 0 to 16, not 17"),
        (["--patch-max-size", "2147483648"], "not 2147483648"),
        (["--patch-interval", "5"], "must be 10 to 86400 seconds, not 5"),
        (["--outcome-installations-per-network", "0"], "must be at least 1, not 0"),
        (["--outcome-network-prefixes", "24,129"], "'24,129' is not two prefix lengths"),
        (["--outcome-network-prefixes", "64"], "'64' is not two prefix lengths"),
        (["--outcome-retention-days", "7"], "must be 8 to 3650 days, not 7"),
    ])
    func aBadValueStopsTheServerNamingIt(arguments: [String], named: String) async throws {
        let scratch = try Scratch()
        let storage = scratch.url.appendingPathComponent("storage")
        let output = try await Command.depot(["serve", "--port", "0", "--storage", storage.path] + arguments, environment: [:])
        #expect(output.status != 0)
        #expect(output.error.contains(named), "\(output.error)")
        #expect(!FileManager.default.fileExists(atPath: storage.appendingPathComponent("depot.sqlite").path), "nothing was started")
    }

    @Test func aReadyFileThatCannotBeWrittenStopsTheServerSayingSo() async throws {
        let scratch = try Scratch()
        let ready = scratch.url.appendingPathComponent("missing/ready")
        let output = try await Command.depot(
            ["serve", "--port", "0", "--storage", scratch.path("storage"), "--ready-file", ready.path], environment: [:])
        #expect(output.status == 1)
        #expect(output.error.contains("Could not write the server's address to --ready-file \(ready.path)"), "\(output.error)")
        #expect(!output.text.contains("listening on"), "the server did not say it was ready: \(output.text)")
    }

    @Test func anHTTPSPublicURLMakesConsoleCookiesSecure() async throws {
        let scratch = try Scratch()
        let server = try await ServerProcess(
            storage: scratch.url.appendingPathComponent("storage"),
            arguments: [
                "--public-url", "https://models.example.com", "--trusted-proxy", "127.0.0.1",
                "--console-idle-timeout", "600",
            ])
        let signIn = try await Command.curl([
            "-o", "/dev/null", "-D", "-", "--data-urlencode", "token=\(ServerProcess.adminToken)",
            server.url.appendingPathComponent("console/sign-in").absoluteString,
        ])
        let cookie = try #require(
            signIn.text.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie: depot_console=") },
            "\(signIn.text)")
        #expect(cookie.contains("Secure") && cookie.contains("HttpOnly") && !cookie.contains("Max-Age"), "\(cookie)")
    }
}
