import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepotServer

/// Console sessions that exist on the server: the cookie holds a random id, the catalog the
/// session; signing out, idling, the lifetime and revoking the token end it; cookies that name no
/// session are refused and counted as authentication failures.
@Suite struct ConsoleSessionTests {
    static func cookie(_ value: String) -> HTTPFields { [.cookie: "\(ConsoleSession.cookieName)=\(value)"] }

    /// The sign-in page with `401`, saying why, and the cookie cleared.
    static func isSignedOut(_ response: TestServer.Response) -> Bool {
        response.status == .unauthorized && response.text.contains("console session has ended")
            && response.text.contains("type=\"password\"")
            && response.headers[.setCookie]?.contains("Max-Age=0") == true
    }

    static func failures(_ client: TestServer.Client) async throws -> Int {
        let text = try await client.request(.get, "/metrics", headers: [:]).text
        return Int(try #require(text.firstMatch(of: /\ndepot_authentication_failures_total (\d+)/)?.1)) ?? -1
    }

    @Test(arguments: DepotBackend.allCases) func aCookieReusedAfterSignOutIsRefused(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let (cookie, csrf) = try await ConsoleTests.signIn(client)
            #expect(try await client.request(.get, "/console/models", headers: cookie).status == .ok)
            let signOut = try await ConsoleTests.post(client, "/console/sign-out", "csrf=\(csrf)", cookie: cookie)
            #expect(signOut.status == .seeOther)
            #expect(Self.isSignedOut(try await client.request(.get, "/console/models", headers: cookie)), "the old cookie, sent again")
            let change = try await ConsoleTests.post(client, "/console/models", "csrf=\(csrf)&name=flowers", cookie: cookie)
            #expect(Self.isSignedOut(change))
            var uploadHeaders = cookie
            uploadHeaders[ConsoleController.csrfHeader] = csrf
            let upload = try await client.request(
                .post, "/console/models/flowers/versions", headers: uploadHeaders,
                body: ByteBuffer(bytes: try Fixtures.bytes("float_classifier")))
            #expect(
                upload.status == .unauthorized && upload.text.contains("\"code\":\"unauthorized\""),
                "the upload script gets the API's error")
            #expect(try await client.request(.get, "/v1/admin/models").decode(ModelList.self).models.isEmpty, "nothing was created")
        }
    }

    @Test(arguments: DepotBackend.allCases) func anUnusedSessionEndsAfterTheIdleTimeoutAndAUsedOneAtItsLifetime(_ backend: DepotBackend)
        async throws
    {
        var server = try await TestServer(backend)
        let clock = MovableClock()
        server.configuration.clock = { clock.now }
        server.configuration.consoleIdleTimeout = 600
        server.configuration.consoleSessionLifetime = 3600
        try await server.run { client in
            let (idle, _) = try await ConsoleTests.signIn(client)
            clock.advance(by: 599)
            #expect(try await client.request(.get, "/console/models", headers: idle).status == .ok, "used just before the idle timeout")
            clock.advance(by: 599)
            #expect(try await client.request(.get, "/console/models", headers: idle).status == .ok, "the use before renewed it")
            clock.advance(by: 601)
            #expect(
                Self.isSignedOut(try await client.request(.get, "/console/models", headers: idle)),
                "unused for longer than the idle timeout")

            let (busy, _) = try await ConsoleTests.signIn(client)
            for _ in 0..<6 {
                clock.advance(by: 500)
                #expect(try await client.request(.get, "/console/models", headers: busy).status == .ok)
            }
            clock.advance(by: 601)
            #expect(
                Self.isSignedOut(try await client.request(.get, "/console/models", headers: busy)), "used all along, but past its lifetime")
        }
    }

    @Test(arguments: DepotBackend.allCases) func revokingTheTokenEndsItsSessions(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let created = try await client.json(.post, "/v1/admin/keys", AccessKeyCreation(kind: .admin, name: "second")).decode(
                CreatedAccessKey.self)
            let signIn = try await client.request(
                .post, "/console/sign-in", headers: ConsoleTests.form,
                body: ByteBuffer(string: "token=\(created.secret)"))
            let pair = try #require(signIn.headers[.setCookie]).prefix { $0 != ";" }
            let cookie: HTTPFields = [.cookie: String(pair)]
            #expect(try await client.request(.get, "/console/models", headers: cookie).status == .ok)
            #expect(try await client.request(.delete, "/v1/admin/keys/\(created.id)").status == .ok)
            #expect(Self.isSignedOut(try await client.request(.get, "/console/models", headers: cookie)))
            let (other, _) = try await ConsoleTests.signIn(client)
            #expect(try await client.request(.get, "/console/models", headers: other).status == .ok, "the other token's sessions go on")
        }
    }

    @Test(arguments: DepotBackend.allCases) func cookiesThatNameNoSessionAreRefusedWithoutATrapAndCounted(_ backend: DepotBackend)
        async throws
    {
        try await TestServer(backend).run { client in
            let before = try await Self.failures(client)
            let forged = [
                "9223372036854775807.0.x", "-9223372036854775808.0.x", "1e308.00.\(TestServer.adminToken)",
                "99999999999.\(String(repeating: "0", count: 64)).\(TestServer.adminToken)", String(repeating: "ab", count: 32),
                String(repeating: "AB", count: 32), String(repeating: "a", count: 63), String(repeating: "a", count: 5000),
                "%00%ff", "\"\(String(repeating: "ab", count: 32))\"", "",
            ]
            for value in forged {
                let response = try await client.request(.get, "/console/models", headers: Self.cookie(value))
                #expect(Self.isSignedOut(response), "cookie '\(value.prefix(40))': \(response.status)")
            }
            #expect(try await Self.failures(client) - before == forged.count, "every cookie naming no session is a failed authentication")
            #expect(try await client.request(.get, "/healthz", headers: [:]).status == .ok)
        }
    }

    @Test(arguments: DepotBackend.allCases) func rawFormBodiesAreParsedLikeABrowsersAndNeverTrap(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            for body in [
                "token=a b", "token=%", "token=%zz%4", "token=<script>", "token=\u{00e9}\u{1F600}", "token=\u{0}\u{7}",
                "&&&=&token", "token=\(String(repeating: "%", count: 5000))", "token=%FF%FE",
            ] {
                let response = try await client.request(
                    .post, "/console/sign-in", headers: ConsoleTests.form, body: ByteBuffer(string: body))
                #expect(response.status == .unauthorized, "\(body.prefix(40)): \(response.status)")
                #expect(response.text.contains("not a working ModelDepot token"))
            }
            let spaced = try await client.request(
                .post, "/console/sign-in", headers: ConsoleTests.form,
                body: ByteBuffer(string: "csrf=x&token=+\(TestServer.adminToken)+"))
            #expect(spaced.status == .seeOther, "'+' is a space, and spaces around the token are trimmed")
            let large = try await client.request(
                .post, "/console/sign-in", headers: ConsoleTests.form,
                body: ByteBuffer(string: "token=" + String(repeating: "a", count: 70_000)))
            #expect(large.status == .contentTooLarge)
            #expect(try await client.request(.get, "/healthz", headers: [:]).status == .ok)
        }
    }

    @Test(arguments: DepotBackend.allCases) func guessedCookiesFromOneAddressAreThrottled(_ backend: DepotBackend) async throws {
        var server = try await TestServer(backend)
        server.configuration.authenticationFailureAllowance = 3
        let frozen = ContinuousClock.now
        server.configuration.authenticationClock = { frozen }
        defer { try? FileManager.default.removeItem(at: server.storage) }
        let app = try await buildApplication(server.configuration)
        try await app.testShuttingDown(.live) { client in
            // The throttle's clock stands still: a backoff, once begun, lasts for the whole test.
            var statuses: [HTTPResponse.Status] = []
            for attempt in 0..<5 {
                let guess = String(format: "%064x", attempt)
                statuses.append(try await client.execute(uri: "/console/models", method: .get, headers: Self.cookie(guess)).status)
            }
            #expect(
                statuses == Array(repeating: .unauthorized, count: 4) + [.tooManyRequests],
                "the allowance, then the failure that starts the wait, then the wait")
            let signIn = try await client.execute(
                uri: "/console/sign-in", method: .post, headers: ConsoleTests.form,
                body: ByteBuffer(string: "token=\(TestServer.adminToken)"))
            #expect(signIn.status == .tooManyRequests, "the same throttle as the API's and the sign-in's")
            #expect(signIn.headers[.setCookie] == nil)
        }
    }
}
