import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotRollouts
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepotServer

/// The web console through the router: sign-in with an admin token into an `HttpOnly`,
/// `SameSite=Strict` cookie, CSRF on every change, a strict Content-Security-Policy, expiry, and
/// the models and versions pages over the same catalog as the admin API.
@Suite struct ConsoleTests {
    static let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]

    /// Signs in and returns the cookie header to send and the page's CSRF token.
    static func signIn(_ client: TestServer.Client) async throws -> (cookie: HTTPFields, csrf: String) {
        let response = try await client.request(
            .post, "/console/sign-in", headers: form,
            body: ByteBuffer(string: "token=\(TestServer.adminToken)"))
        #expect(response.status == .seeOther)
        let setCookie = try #require(response.headers[.setCookie])
        let pair = String(setCookie.prefix { $0 != ";" })
        let cookie: HTTPFields = [.cookie: pair]
        let page = try await client.request(.get, "/console/models", headers: cookie)
        let csrf = try #require(page.text.firstMatch(of: /name="csrf" value="([0-9a-f]+)"/)?.1)
        return (cookie, String(csrf))
    }

    static func post(_ client: TestServer.Client, _ path: String, _ body: String, cookie: HTTPFields) async throws -> TestServer.Response {
        var headers = form
        headers.append(contentsOf: cookie)
        return try await client.request(.post, path, headers: headers, body: ByteBuffer(string: body))
    }

    @Test(arguments: DepotBackend.allCases) func signInSetsAStrictHttpOnlyCookieAndEveryPageHasTheCSP(_ backend: DepotBackend) async throws
    {
        try await TestServer(backend).run { client in
            let signIn = try await client.request(.get, "/console/sign-in", headers: [:])
            #expect(signIn.status == .ok)
            #expect(signIn.headers[HTTPField.Name("Content-Security-Policy")!]?.contains("script-src 'self'") == true)
            #expect(signIn.headers[HTTPField.Name("Content-Security-Policy")!]?.contains("frame-ancestors 'none'") == true)
            #expect(!signIn.text.contains("<script>") && !signIn.text.contains("style=\""), "no inline script or style")
            #expect(signIn.text.contains("type=\"password\""))

            let response = try await client.request(
                .post, "/console/sign-in", headers: Self.form,
                body: ByteBuffer(string: "token=\(TestServer.adminToken)"))
            #expect(response.status == .seeOther && response.headers[.location] == "/console/models")
            let cookie = try #require(response.headers[.setCookie])
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/console"))
            #expect(!cookie.contains("Secure"), "plain http")
            #expect(!(response.headers[.location] ?? "").contains(TestServer.adminToken), "never in a URL")
            #expect(!cookie.contains("Max-Age") && !cookie.contains("Expires"), "a browser session cookie")
            let value = try #require(cookie.firstMatch(of: /depot_console=([^;]*)/)?.1)
            #expect(value.wholeMatch(of: /[0-9a-f]{64}/) != nil, "a random id and nothing else: \(value)")
            var forwarded = Self.form
            forwarded[HTTPField.Name("X-Forwarded-Proto")!] = "https"
            let claimed = try await client.request(
                .post, "/console/sign-in", headers: forwarded,
                body: ByteBuffer(string: "token=\(TestServer.adminToken)"))
            #expect(claimed.headers[.setCookie]?.contains("Secure") == false, "X-Forwarded-Proto from a peer that is no trusted proxy")
        }
    }

    @Test(arguments: DepotBackend.allCases) func anHTTPSPublicURLMakesTheCookieSecure(_ backend: DepotBackend) async throws {
        var server = try await TestServer(backend)
        server.configuration.publicURL = URL(string: "https://models.example.com")
        try await server.run { client in
            let response = try await client.request(
                .post, "/console/sign-in", headers: Self.form,
                body: ByteBuffer(string: "token=\(TestServer.adminToken)"))
            #expect(response.status == .seeOther)
            #expect(response.headers[.setCookie]?.contains("Secure") == true)
        }
    }

    @Test(arguments: DepotBackend.allCases) func wrongTokensAndAppKeysAreRefused(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let wrong = try await client.request(
                .post, "/console/sign-in", headers: Self.form, body: ByteBuffer(string: "token=depot_nope"))
            #expect(wrong.status == .unauthorized)
            #expect(wrong.headers[.setCookie] == nil)
            #expect(wrong.text.contains("not a working ModelDepot token"))
            let app = try #require(try await client.appKey()[.authorization]).dropFirst("Bearer ".count)
            let refused = try await client.request(.post, "/console/sign-in", headers: Self.form, body: ByteBuffer(string: "token=\(app)"))
            #expect(refused.status == .forbidden)
            #expect(refused.text.contains("needs an admin token"))
            let forged = try await client.request(
                .get, "/console/models", headers: [.cookie: "depot_console=\(String(repeating: "ab", count: 32))"])
            #expect(
                forged.status == .unauthorized && forged.text.contains("console session has ended"), "a cookie this server did not make")
            let none = try await client.request(.get, "/console/models", headers: [:])
            #expect(none.status == .seeOther && none.headers[.location] == "/console/sign-in")
        }
    }

    @Test(arguments: DepotBackend.allCases) func changesNeedTheSessionsCSRFTokenAndSignOutEndsIt(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let (cookie, csrf) = try await Self.signIn(client)
            let missing = try await Self.post(client, "/console/models", "name=flowers", cookie: cookie)
            #expect(missing.status == .forbidden)
            let wrong = try await Self.post(
                client, "/console/models", "name=flowers&csrf=\(String(repeating: "0", count: 64))", cookie: cookie)
            #expect(wrong.status == .forbidden)
            #expect(try await client.request(.get, "/v1/admin/models").decode(ModelList.self).models.isEmpty, "nothing was created")

            let created = try await Self.post(
                client, "/console/models", "csrf=\(csrf)&name=flowers&description=Petals+and+more&tags=vision%2C+v2", cookie: cookie)
            #expect(created.status == .seeOther && created.headers[.location] == "/console/models/flowers")
            let model = try await client.request(.get, "/v1/admin/models/flowers").decode(ModelSummary.self)
            #expect(model.description == "Petals and more" && model.tags == ["vision", "v2"])
            let invalid = try await Self.post(client, "/console/models", "csrf=\(csrf)&name=Not+Valid", cookie: cookie)
            #expect(invalid.status == .badRequest)
            #expect(invalid.text.contains("is not allowed"), "the API's message, on the page")

            let signOut = try await Self.post(client, "/console/sign-out", "csrf=\(csrf)", cookie: cookie)
            #expect(signOut.status == .seeOther && signOut.headers[.setCookie]?.contains("Max-Age=0") == true)
        }
    }

    @Test(arguments: DepotBackend.allCases) func versionsShowTheirSignatureMetadataLabelsAndFilesAndDeletionNeedsConfirmation(
        _ backend: DepotBackend
    ) async throws {
        try await TestServer(backend).run { client in
            try await client.createModel("flowers")
            _ = try await client.upload("metadata/image_classifier", to: "flowers")
            let (cookie, csrf) = try await Self.signIn(client)
            let list = try await client.request(.get, "/console/models", headers: cookie)
            #expect(
                list.text.contains("href=\"/console/models/flowers\"")
                    && list.text.contains("every device: v1 (newest published; no default set)"))
            let page = try await client.request(.get, "/console/models/flowers", headers: cookie)
            #expect(page.text.contains("href=\"/console/models/flowers/versions/1\""), "the table links each version's page")
            // The version's page shows what `depot versions flowers 1` prints, line for line.
            let version = try await client.request(.get, "/console/models/flowers/versions/1", headers: cookie)
            let shown = try await client.request(.get, "/v1/admin/models/flowers/versions/1").decode(ModelVersion.self)
            let lines = VersionText(version: shown).lines
            #expect(
                lines.contains("  image  float32 [1, 16, 16, 3]") && lines.contains { $0.hasPrefix("model metadata: \"ImageClassifier\"") })
            #expect(lines.contains { $0.contains("labels of output 0") && $0.contains("5 — \"red\", \"green\"") }, "\(lines)")
            let escaped = lines.joined(separator: "\n").replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(
                of: "\"", with: "&quot;"
            )
            .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(
                of: "'", with: "&#39;")
            #expect(version.text.contains("<pre class=\"version-text\">\(escaped)</pre>"), "\(version.text)")
            #expect(try await client.request(.get, "/console/models/flowers/versions/9", headers: cookie).status == .notFound)

            let confirm = try await client.request(.get, "/console/models/flowers/delete", headers: cookie)
            #expect(confirm.text.contains("its 1 version(s)"))
            let unconfirmed = try await Self.post(client, "/console/models/flowers/delete", "csrf=\(csrf)&confirm=tulips", cookie: cookie)
            #expect(unconfirmed.status == .badRequest)
            #expect(try await client.request(.get, "/v1/admin/models/flowers").status == .ok, "still there")
            let deleted = try await Self.post(client, "/console/models/flowers/delete", "csrf=\(csrf)&confirm=flowers", cookie: cookie)
            #expect(deleted.status == .seeOther)
            #expect(try await client.request(.get, "/v1/admin/models/flowers").status == .notFound)
            #expect(try await client.storedBlobs().isEmpty, "its blob went with it, as through the API")
        }
    }

    @Test(arguments: DepotBackend.allCases) func versionsArePublishedUnpublishedAndDeletedAndTheRolloutsConflictIsExplained(
        _ backend: DepotBackend
    ) async throws {
        try await TestServer(backend).run { client in
            try await client.createModel("flowers")
            _ = try await client.upload("float_classifier", to: "flowers", query: "publish=false")
            _ = try await client.upload("int8_conv", to: "flowers", query: "publish=true")
            let (cookie, csrf) = try await Self.signIn(client)
            let page = try await client.request(.get, "/console/models/flowers", headers: cookie)
            #expect(page.text.contains("Publish v1") && page.text.contains("Unpublish v2"))

            let published = try await Self.post(client, "/console/models/flowers/versions/1/publish", "csrf=\(csrf)", cookie: cookie)
            #expect(published.status == .seeOther && published.headers[.location] == "/console/models/flowers?published=1")
            #expect(try await client.request(.get, "/v1/admin/models/flowers/versions/1").decode(ModelVersion.self).published)
            // The page says what publishing changed: nothing, as v2 is newer and the rollout names no version.
            let notice = try await client.request(.get, "/console/models/flowers?published=1", headers: cookie)
            #expect(
                notice.text.contains(
                    "Published v1. No device gets it until the rollout names it (the newest published version is still v2"),
                "\(notice.text)")
            #expect(
                try await Self.post(client, "/console/models/flowers/versions/1/unpublish", "", cookie: cookie).status == .forbidden,
                "no CSRF token")

            #expect(try await client.json(.put, "/v1/admin/models/flowers/rollout/default", RolloutVersionChoice(version: 1)).status == .ok)
            let refused = try await Self.post(client, "/console/models/flowers/versions/1/unpublish", "csrf=\(csrf)", cookie: cookie)
            #expect(refused.status == .conflict)
            #expect(refused.text.contains("the rollout hands it out") && refused.text.contains("depot rollout show flowers"))
            #expect(try await client.request(.get, "/v1/admin/models/flowers/versions/1").decode(ModelVersion.self).published, "unchanged")
            let kept = try await Self.post(client, "/console/models/flowers/versions/1/delete", "csrf=\(csrf)&confirm=1", cookie: cookie)
            #expect(kept.status == .conflict)

            #expect(
                try await client.request(.get, "/console/models/flowers/versions/2/delete", headers: cookie).text.contains(
                    "Type 2 to confirm"))
            let unconfirmed = try await Self.post(
                client, "/console/models/flowers/versions/2/delete", "csrf=\(csrf)&confirm=1", cookie: cookie)
            #expect(unconfirmed.status == .badRequest)
            let deleted = try await Self.post(client, "/console/models/flowers/versions/2/delete", "csrf=\(csrf)&confirm=2", cookie: cookie)
            #expect(deleted.status == .seeOther)
            #expect(
                try await client.request(.get, "/v1/admin/models/flowers/versions").decode(ModelVersionList.self).versions.map(\.version)
                    == [1])
        }
    }

    @Test(arguments: DepotBackend.allCases) func keysAreCreatedWithTheSecretShownOnceAndRevokedAfterConfirmation(_ backend: DepotBackend)
        async throws
    {
        try await TestServer(backend).run { client in
            try await client.createModel("flowers")
            let (cookie, csrf) = try await Self.signIn(client)
            let page = try await client.request(.get, "/console/keys", headers: cookie)
            #expect(page.text.contains("admin token") && page.text.contains("Active manifest key"))
            #expect(page.text.contains("No root document yet"), "the signing warning")

            let created = try await Self.post(client, "/console/keys", "csrf=\(csrf)&kind=app&name=phones&models=flowers", cookie: cookie)
            #expect(created.status == .created)
            let secret = try #require(created.text.firstMatch(of: /id="secret" value="([^"]+)"/)?.1)
            #expect(
                try await client.request(.get, "/v1/models/flowers/manifest", headers: [.authorization: "Bearer \(secret)"]).status
                    == .notFound,
                "the secret shown works: flowers has no published version")
            let again = try await client.request(.get, "/console/keys", headers: cookie)
            #expect(!again.text.contains(String(secret)), "shown only once")
            let keys = try await client.request(.get, "/v1/admin/keys").decode(AccessKeyList.self).keys
            let app = try #require(keys.first { $0.name == "phones" })
            let flowers = try ModelName("flowers")
            #expect(app.kind == .app && app.models == [flowers])

            let limitedAdmin = try await Self.post(client, "/console/keys", "csrf=\(csrf)&kind=admin&models=flowers", cookie: cookie)
            #expect(limitedAdmin.status == .badRequest && limitedAdmin.text.contains("cannot be limited to models"))
            #expect(try await Self.post(client, "/console/keys/\(app.id)/revoke", "", cookie: cookie).status == .forbidden, "no CSRF token")

            #expect(
                try await client.request(.get, "/console/keys/\(app.id)/revoke", headers: cookie).text.contains("Revoke app key \(app.id)?")
            )
            let revoked = try await Self.post(client, "/console/keys/\(app.id)/revoke", "csrf=\(csrf)", cookie: cookie)
            #expect(revoked.status == .seeOther)
            #expect(
                try await client.request(.get, "/v1/models/flowers/manifest", headers: [.authorization: "Bearer \(secret)"]).status
                    == .unauthorized)
            let admin = try #require(keys.first { $0.kind == .admin })
            let last = try await Self.post(client, "/console/keys/\(admin.id)/revoke", "csrf=\(csrf)", cookie: cookie)
            #expect(last.status == .conflict, "the last admin token stays")
        }
    }

    @Test(arguments: DepotBackend.allCases) func theStylesheetIsServedWithCacheHeaders(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let css = try await client.request(.get, "/console/assets/console.css", headers: [:])
            #expect(css.status == .ok)
            #expect(css.headers[.contentType] == "text/css; charset=utf-8")
            #expect(css.headers[.cacheControl] == "public, max-age=3600")
            #expect(css.text.contains(".card"))
        }
    }
}
