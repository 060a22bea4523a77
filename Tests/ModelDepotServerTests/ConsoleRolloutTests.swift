import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotRollouts
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepotServer

/// The console's uploads, rollouts (previewed, then saved only if unchanged), pins, history and
/// results through the router, over the same catalog as the admin API.
@Suite struct ConsoleRolloutTests {
    static func rollout(_ client: TestServer.Client) async throws -> Rollout {
        try await client.request(.get, "/v1/admin/models/flowers/rollout").decode(Rollout.self)
    }

    /// Posts the preview's own form back: its hidden fields, as the browser would.
    static func save(_ client: TestServer.Client, preview: TestServer.Response, cookie: HTTPFields) async throws -> TestServer.Response {
        let action = try #require(preview.text.firstMatch(of: /<form method="post" action="([^"]+)" class="card">/)?.1)
        let fields = preview.text.matches(of: /<input type="hidden" name="([^"]+)" value="([^"]*)">/).map { match in
            "\(match.1)=\(Self.decoded(String(match.2)).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")"
        }
        return try await ConsoleTests.post(client, String(action), fields.joined(separator: "&"), cookie: cookie)
    }

    static func decoded(_ html: String) -> String {
        html.replacingOccurrences(of: "&#10;", with: "\n").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&quot;", with: "\"")
            .replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
    }

    static func withTwoVersions(
        _ backend: DepotBackend, _ body: @escaping @Sendable (TestServer.Client, HTTPFields, String) async throws -> Void
    ) async throws {
        try await TestServer(backend).run { client in
            try await client.createModel("flowers")
            _ = try await client.upload("float_classifier", to: "flowers")
            _ = try await client.upload("int8_conv", to: "flowers")
            let (cookie, csrf) = try await ConsoleTests.signIn(client)
            try await body(client, cookie, csrf)
        }
    }

    /// Each empty page names the next step (the command, the link, the SDK call), and once a rule
    /// splits, the model's and rollout's pages say what devices with and without an id get.
    @Test(arguments: DepotBackend.allCases) func emptyPagesSayWhatToDoNextAndEachSegmentIsShownWhatItGets(_ backend: DepotBackend)
        async throws
    {
        try await TestServer(backend).run { client in
            let (cookie, _) = try await ConsoleTests.signIn(client)
            func page(_ path: String) async throws -> String { try await client.request(.get, path, headers: cookie).text }
            let models = try await page("/console/models")
            #expect(
                models.contains("<code>depot models create NAME</code>") && models.contains("<a href=\"/console/keys\">Keys</a>")
                    && models.contains("<code>depot keys root init</code>"), "\(models)")
            try await client.createModel("flowers")
            let model = try await page("/console/models/flowers")
            #expect(
                model.contains("depot upload flowers model.tflite --publish")
                    && model.contains("try await downloader.model(named: \"flowers\")"), "\(model)")
            #expect(!(try await page("/console/models")).contains("No models yet."))
            _ = try await client.upload("float_classifier", to: "flowers")
            _ = try await client.upload("int8_conv", to: "flowers")
            #expect(
                try await page("/console/models/flowers/experiment").contains("<code>depot rollout set flowers --split 1=90,2=10</code>"))
            #expect(try await page("/console/models/flowers/results").contains("Depot-Installation-ID: test-device"))

            let split = RolloutRuleChange(
                conditions: [], shares: [.init(version: 1, basisPoints: 9_000), .init(version: 2, basisPoints: 1_000)])
            #expect(try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/main", split).status == .ok)
            let segment = "rule &#39;main&#39; (all devices): with an installation id v1 90%, v2 10%; without one v1"
            #expect(try await page("/console/models/flowers/rollout").contains(segment))
            #expect(try await page("/console/models/flowers").contains(segment))
        }
    }

    @Test(arguments: DepotBackend.allCases) func uploadsNeedTheSessionAndItsCSRFHeaderAndShowTheVerifiersError(_ backend: DepotBackend)
        async throws
    {
        try await TestServer(backend).run { client in
            try await client.createModel("flowers")
            let (cookie, csrf) = try await ConsoleTests.signIn(client)
            let page = try await client.request(.get, "/console/models/flowers", headers: cookie)
            #expect(page.text.contains("id=\"upload-progress\"") && page.text.contains("src=\"/console/assets/upload.js\""))
            let script = try await client.request(.get, "/console/assets/upload.js", headers: [:])
            #expect(script.status == .ok && script.headers[.contentType] == "text/javascript; charset=utf-8")
            #expect(script.text.contains("X-Depot-CSRF") && script.text.contains("upload.addEventListener(\"progress\""))
            #expect(try await client.request(.get, "/console/assets/..%2Fconsole.css", headers: [:]).status == .notFound)
            #expect(try await client.request(.get, "/console/assets/app.js", headers: [:]).status == .notFound)

            let model = ByteBuffer(bytes: try Fixtures.bytes("float_classifier"))
            var headers = cookie
            headers[.contentType] = "application/octet-stream"
            let unsent = try await client.request(.post, "/console/models/flowers/versions", headers: headers, body: model)
            #expect(unsent.status == .forbidden && unsent.error?.code == .forbidden)
            let signedOut = try await client.request(
                .post, "/console/models/flowers/versions",
                headers: [ConsoleController.csrfHeader: csrf], body: model)
            #expect(signedOut.status == .unauthorized && signedOut.error?.message.contains("sign in again") == true)
            headers[ConsoleController.csrfHeader] = csrf
            let garbage = try await client.request(
                .post, "/console/models/flowers/versions", headers: headers,
                body: ByteBuffer(string: "this is not a model"))
            #expect(garbage.status == .unprocessableContent, "the verifier's refusal: \(garbage.text)")
            #expect(try await client.request(.get, "/v1/admin/models/flowers/versions").decode(ModelVersionList.self).versions.isEmpty)

            headers[.depotContentLength] = "\(model.readableBytes)"
            let stored = try await client.request(
                .post, "/console/models/flowers/versions?notes=from%20the%20browser&publish=true",
                headers: headers, body: model)
            #expect(stored.status == .created)
            let version = try stored.decode(ModelVersion.self)
            #expect(version.version == 1 && version.published && version.notes == "from the browser")
            #expect(version.size == model.readableBytes)
            let admin = try await client.request(.get, "/v1/admin/keys").decode(AccessKeyList.self).keys.first { $0.kind == .admin }
            #expect(version.uploadedBy != nil && version.uploadedBy == admin?.id, "uploaded by the signed-in admin token")
            #expect(try await client.request(.get, "/console/models/flowers", headers: cookie).text.contains("by key \(admin?.id ?? "?")"))
        }
    }

    @Test(arguments: DepotBackend.allCases) func aRuleIsPreviewedWithTheSharesThatMoveAndSavedExactlyAsPreviewed(_ backend: DepotBackend)
        async throws
    {
        try await Self.withTwoVersions(backend) { client, cookie, csrf in
            let first = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/default", "csrf=\(csrf)&version=1", cookie: cookie)
            #expect(first.status == .ok && first.text.contains("100.00% of them move from v2 to v1"))
            #expect(try await Self.rollout(client).defaultVersion == nil, "a preview saves nothing")
            #expect(try await Self.save(client, preview: first, cookie: cookie).status == .seeOther)
            #expect(try await Self.rollout(client).defaultVersion == 1)

            let rule = "csrf=\(csrf)&rule=ios-canary&conditions=platform%3Dios%0AappVersion%3E%3D3.2.0&share-1=90&share-2=10"
            let preview = try await ConsoleTests.post(client, "/console/models/flowers/rollout/rules", rule, cookie: cookie)
            #expect(preview.status == .ok)
            #expect(preview.text.contains("New rule &#39;ios-canary&#39; (platform=ios, appVersion&gt;=3.2.0)"))
            #expect(preview.text.contains("10.00% of them move from v1 to v2") && preview.text.contains("90.00% of them stay on v1"))
            #expect(try await Self.rollout(client).rules.isEmpty)
            #expect(try await Self.save(client, preview: preview, cookie: cookie).status == .seeOther)
            let saved = try await Self.rollout(client)
            #expect(saved.rules.map(\.name) == ["ios-canary"])
            #expect(saved.rules[0].conditions.map(\.description) == ["platform=ios", "appVersion>=3.2.0"])
            #expect(saved.rules[0].split.ranges == [.init(version: 1, start: 0, end: 9_000), .init(version: 2, start: 9_000, end: 10_000)])
            let editor = try await client.request(.get, "/console/models/flowers/rollout?rule=ios-canary", headers: cookie).text
            #expect(
                editor.contains("name=\"rule\" value=\"ios-canary\"") && editor.contains("platform=ios\nappVersion&gt;=3.2.0</textarea>"))
            #expect(editor.contains("name=\"share-1\" min=\"0\" max=\"100\" step=\"0.01\" value=\"90\""), "the editor starts from the rule")

            let wider = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/rules",
                "csrf=\(csrf)&rule=ios-canary&conditions=platform%3Dios%0AappVersion%3E%3D3.2.0&share-1=80&share-2=20.00",
                cookie: cookie)
            #expect(wider.text.contains("10.00% of them move from v1 to v2") && wider.text.contains("90.00% of them keep their version"))
            #expect(try await Self.save(client, preview: wider, cookie: cookie).status == .seeOther)
            let widened = try await Self.rollout(client).rules[0]
            let moved = (0..<RolloutBucket.count).filter {
                saved.rules[0].split.version(forBucket: $0) != widened.split.version(forBucket: $0)
            }
            #expect(moved.count == 1_000 && widened.salt == saved.rules[0].salt, "the buckets that moved are the 10.00% previewed")

            let removal = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/rules/ios-canary/remove", "csrf=\(csrf)", cookie: cookie)
            #expect(removal.text.contains("20.00% of them move from v2 to v1") && removal.text.contains("80.00% of them stay on v1"))
            #expect(try await Self.save(client, preview: removal, cookie: cookie).status == .seeOther)
            #expect(try await Self.rollout(client).rules.isEmpty)
        }
    }

    @Test(arguments: DepotBackend.allCases) func aPreviewOfAnOlderRolloutIsNotSavedAndBadSplitsKeepWhatWasTyped(_ backend: DepotBackend)
        async throws
    {
        try await Self.withTwoVersions(backend) { client, cookie, csrf in
            let preview = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/rules",
                "csrf=\(csrf)&rule=half&share-1=50&share-2=50", cookie: cookie)
            #expect(try await client.json(.put, "/v1/admin/models/flowers/rollout/default", RolloutVersionChoice(version: 1)).status == .ok)
            let stale = try await Self.save(client, preview: preview, cookie: cookie)
            #expect(stale.status == .conflict && stale.text.contains("changed after this preview"))
            #expect(try await Self.rollout(client).rules.isEmpty, "nothing saved")

            let short = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/rules",
                "csrf=\(csrf)&rule=half&share-1=85&share-2=10", cookie: cookie)
            #expect(short.status == .badRequest && short.text.contains("The shares add up to 95.0%, not 100%"))
            #expect(short.text.contains("name=\"share-1\" min=\"0\" max=\"100\" step=\"0.01\" value=\"85\""), "what was typed is kept")
            let words = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/rules",
                "csrf=\(csrf)&rule=half&share-1=ninety&share-2=10", cookie: cookie)
            #expect(words.status == .badRequest && words.text.contains("The share of v1, &#39;ninety&#39;, is not a percentage"))
            let fine = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/rules",
                "csrf=\(csrf)&rule=half&share-1=33.333&share-2=66.667", cookie: cookie)
            #expect(fine.status == .badRequest, "at most two decimals: one bucket is 0.01%")
            for refused in ["-0.5", "%2B5", "92233720368547759", "100.01", "1e2", "50."] {
                let answer = try await ConsoleTests.post(
                    client, "/console/models/flowers/rollout/rules",
                    "csrf=\(csrf)&rule=half&share-1=\(refused)&share-2=0", cookie: cookie)
                #expect(answer.status == .badRequest, "\(refused)")
            }
            let half = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/rules",
                "csrf=\(csrf)&rule=half&share-1=.5&share-2=99.5", cookie: cookie)
            #expect(
                half.status == .ok && half.text.contains("0.50% of them stay on v1")
                    && half.text.contains("99.50% of them move from v1 to v2"), "'.5' is 0.5%, as a number field sends it")
            let condition = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/rules",
                "csrf=\(csrf)&rule=half&conditions=planet%3Dmars&share-1=50&share-2=50", cookie: cookie)
            #expect(condition.status == .badRequest && condition.text.contains("planet"))
            let badName = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/rules",
                "csrf=\(csrf)&rule=Half%20Rule&share-1=50&share-2=50", cookie: cookie)
            #expect(badName.status == .badRequest && badName.text.contains("is not allowed"))
            #expect(try await client.request(.post, "/v1/admin/models/flowers/versions/2/unpublish").status == .ok)
            let unpublished = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/rules",
                "csrf=\(csrf)&rule=half&share-1=50&share-2=50", cookie: cookie)
            #expect(unpublished.status == .badRequest && unpublished.text.contains("no published version 2"))
            let notANumber = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/default", "csrf=\(csrf)&version=seven", cookie: cookie)
            #expect(notANumber.status == .badRequest && notANumber.text.contains("Default version &#39;seven&#39; is not a version number"))
            let unknownDefault = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/default", "csrf=\(csrf)&version=9", cookie: cookie)
            #expect(unknownDefault.status == .badRequest && unknownDefault.text.contains("no published version 9"))
            let noToken = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/rules", "rule=half&share-1=100", cookie: cookie)
            #expect(noToken.status == .forbidden)
            #expect(try await Self.rollout(client) == Rollout(defaultVersion: 1), "every refusal left the rollout as it was")
        }
    }

    @Test(arguments: DepotBackend.allCases) func aPreviewSaysWhenNoDeviceReachesARuleAndWhenTheNewestPublishedVersionChanged(
        _ backend: DepotBackend
    ) async throws {
        try await Self.withTwoVersions(backend) { client, cookie, csrf in
            let everyone = RolloutRuleChange(conditions: [], shares: [.init(version: 1, basisPoints: 10_000)])
            #expect(try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/everyone", everyone).status == .ok)
            let shadowed = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/rules",
                "csrf=\(csrf)&rule=ios&conditions=platform%3Dios&share-1=0&share-2=100", cookie: cookie)
            // The service's own check refuses it in the preview already.
            #expect(shadowed.status == .conflict)
            #expect(
                shadowed.text.contains("Rule &#39;ios&#39; could never be used: rule &#39;everyone&#39; comes before it"),
                "\(shadowed.text)")
            #expect(!shadowed.text.contains("move from"))
            // A rule kept on purpose though no device reaches it: the preview of a change to it says so.
            var kept = RolloutRuleChange(conditions: ["platform=ios"], shares: [.init(version: 1, basisPoints: 10_000)])
            kept.allowShadowed = true
            #expect(try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/ios", kept).status == .ok)
            let edit = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/rules",
                "csrf=\(csrf)&rule=ios&conditions=platform%3Dios&share-1=0&share-2=100", cookie: cookie)
            #expect(
                edit.text.contains("No device reaches this rule, so none moves: rule &#39;everyone&#39; comes before it"), "\(edit.text)")
            #expect(edit.text.contains("No device gets another version.") && !edit.text.contains("move from"))
            let page = try await client.request(.get, "/console/models/flowers/rollout", headers: cookie).text
            #expect(page.contains("Unreachable: rule &#39;everyone&#39; before it takes all its devices."), "the rules table marks it")
            #expect(
                page.contains(
                    "<li>rule &#39;ios&#39; (platform=ios): unreachable, rule &#39;everyone&#39; before it takes all its devices</li>"))
            let results = try await client.request(.get, "/console/models/flowers/results", headers: cookie).text
            #expect(
                results.contains(
                    "Unreachable: rule &#39;everyone&#39; comes before it and takes all its devices, so no device is counted here."),
                "the results mark its sample-ratio check: \(results)")
            #expect(results.components(separatedBy: "Unreachable: ").count == 2, "only the unreachable rule's check says so")
            #expect(try await client.request(.delete, "/v1/admin/models/flowers/rollout/rules/ios").status == .ok)

            let removal = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/rules/everyone/remove", "csrf=\(csrf)", cookie: cookie)
            #expect(try await Self.save(client, preview: removal, cookie: cookie).status == .seeOther)
            // The default follows the newest published version (v2); a preview made then is not
            // saved once v3 is published, since what it said would no longer be true.
            let preview = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/default", "csrf=\(csrf)&version=1", cookie: cookie)
            #expect(preview.text.contains("100.00% of them move from v2 to v1"))
            _ = try await client.upload("float_classifier_labels", to: "flowers")
            let stale = try await Self.save(client, preview: preview, cookie: cookie)
            #expect(stale.status == .conflict && stale.text.contains("newest published version changed after this preview"))
            #expect(try await Self.rollout(client).defaultVersion == nil)
        }
    }

    @Test(arguments: DepotBackend.allCases) func devicesArePinnedAndUnpinnedAndTheHistorySaysWhoChangedWhat(_ backend: DepotBackend)
        async throws
    {
        try await Self.withTwoVersions(backend) { client, cookie, csrf in
            let pinned = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/pins", "csrf=\(csrf)&installation=Tester-1&version=1",
                cookie: cookie)
            #expect(pinned.status == .seeOther)
            #expect(try await Self.rollout(client).pins == [Rollout.Pin(installationID: "tester-1", version: 1)])
            let noVersion = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/pins", "csrf=\(csrf)&installation=tester-2",
                cookie: cookie)
            #expect(noVersion.status == .badRequest && noVersion.text.contains("A pin needs a version"))
            let unknown = try await ConsoleTests.post(
                client, "/console/models/flowers/rollout/pins/remove", "csrf=\(csrf)&installation=nobody",
                cookie: cookie)
            #expect(unknown.status == .notFound && unknown.text.contains("No device &#39;nobody&#39; is pinned"))
            let page = try await client.request(.get, "/console/models/flowers/rollout", headers: cookie)
            #expect(page.text.contains("Unpin tester-1"))
            #expect(
                try await ConsoleTests.post(
                    client, "/console/models/flowers/rollout/pins/remove", "csrf=\(csrf)&installation=tester-1",
                    cookie: cookie
                ).status == .seeOther)
            #expect(try await Self.rollout(client).pins.isEmpty)

            let keys = try await client.request(.get, "/v1/admin/keys").decode(AccessKeyList.self).keys
            let admin = try #require(keys.first { $0.kind == .admin })
            let history = try await client.request(.get, "/console/models/flowers/rollout", headers: cookie).text
            #expect(history.contains("<code>\(admin.id)</code>"))
            #expect(history.contains("default: the newest published version; tester-1 pinned to v1"))
            let rows = history.matches(of: /<tr><td data-label="When">[0-9T:Z-]+<\/td><td data-label="Who \(key\)"><code>/).count
            #expect(rows == 2, "one row per change")

            for device in 0..<50 {
                #expect(
                    try await client.json(.put, "/v1/admin/models/flowers/rollout/pins/d-\(device)", RolloutVersionChoice(version: 2))
                        .status == .ok)
            }
            let long = try await client.request(.get, "/console/models/flowers/rollout", headers: cookie).text
            #expect(long.matches(of: /<tr><td data-label="When">[0-9T:Z-]+<\/td><td data-label="Who \(key\)"><code>/).count == 50)
            #expect(long.contains("The 50 newest of 52 changes; &#39;depot rollout history flowers&#39; lists them all."))
        }
    }

    @Test(arguments: DepotBackend.allCases) func resultsDrawTrafficPerArmAsSVGAndWarnOfASampleRatioMismatch(_ backend: DepotBackend)
        async throws
    {
        try await Self.withTwoVersions(backend) { client, cookie, _ in
            let empty = try await client.request(.get, "/console/models/flowers/results", headers: cookie)
            #expect(empty.status == .ok && empty.text.contains("No traffic in this period") && empty.text.contains("<svg class=\"chart\""))

            let rule = RolloutRuleChange(
                conditions: [], shares: [.init(version: 1, basisPoints: 5_000), .init(version: 2, basisPoints: 5_000)])
            _ = try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/half", rule)
            let key = try await client.appKey()
            var counts = [1: 0, 2: 0]
            for index in 0..<200 {
                var headers = key
                headers[HTTPField.Name("Depot-Installation-ID")!] = "device-\(index)"
                counts[try await client.request(.get, "/v1/models/flowers/manifest", headers: headers).manifest().version, default: 0] += 1
            }
            let page = try await client.request(.get, "/console/models/flowers/results?hours=1", headers: cookie)
            #expect(page.status == .ok)
            #expect(
                page.text.contains(
                    "<tr><td data-label=\"Arm\">rule &#39;half&#39;</td><td data-label=\"Version\">v1</td><td data-label=\"Manifests served\">\(counts[1]!)</td>"
                ))
            #expect(
                page.text.contains(
                    "<tr><td data-label=\"Arm\">rule &#39;half&#39;</td><td data-label=\"Version\">v2</td><td data-label=\"Manifests served\">\(counts[2]!)</td>"
                ))
            #expect(page.text.contains("Matches the split"))
            let lines = page.text.matches(of: /<polyline class="series-\d" points="([^"]+)">/)
            #expect(lines.count == 4, "two series (rule 'half' v1 and v2) in each of the two charts")
            #expect(
                lines.allSatisfy { $0.1.split(separator: " ").count == 13 },
                "an hour in 5-minute windows: 13 points, from the one the hour starts in to now's")

            let skewed = RolloutRuleChange(
                conditions: [], shares: [.init(version: 1, basisPoints: 9_000), .init(version: 2, basisPoints: 1_000)])
            _ = try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/half", skewed)
            let warned = try await client.request(.get, "/console/models/flowers/results", headers: cookie)
            #expect(warned.text.contains("class=\"warning\" role=\"alert\">Sample-ratio mismatch"))
            let wrong = try await client.request(.get, "/console/models/flowers/results?hours=5", headers: cookie)
            #expect(wrong.status == .badRequest && wrong.text.contains("There is no period of 5 hours here"))
        }
    }
}
