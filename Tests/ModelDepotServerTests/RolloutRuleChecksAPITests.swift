import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotRollouts
import ModelDepotShared
import TestSupport
import Testing

/// The rollout's own footguns, refused or made safe: a device without an installation id gets a
/// rule's control, a rule no device can reach is refused (or kept only when asked, and then
/// never guarded), and a split names only published versions, also at 0%. Bodies are sent as
/// raw bytes, as anyone with an admin token could send them.
@Suite struct RolloutRuleChecksAPITests {
    /// A model with published versions 1, 2 and 3, unpublished version 4, and an app key.
    func prepare(_ client: TestServer.Client) async throws -> HTTPFields {
        try await client.createModel("flowers")
        for fixture in ["float_classifier", "int8_conv", "dynamic_batch"] { _ = try await client.upload(fixture, to: "flowers") }
        _ = try await client.upload("float_classifier", to: "flowers", query: "publish=false")
        return try await client.appKey()
    }

    func setRule(_ client: TestServer.Client, _ name: String, _ body: String) async throws -> TestServer.Response {
        try await client.request(.put, "/v1/admin/models/flowers/rollout/rules/\(name)", body: ByteBuffer(string: body))
    }

    func state(_ client: TestServer.Client) async throws -> (rollout: String, history: Int) {
        (
            try await client.request(.get, "/v1/admin/models/flowers/rollout").text,
            try await client.request(.get, "/v1/admin/models/flowers/rollout/history").decode(RolloutHistory.self).changes.count
        )
    }

    func manifest(_ client: TestServer.Client, _ key: HTTPFields, device: String? = nil, platform: String? = nil) async throws
        -> ModelManifest
    {
        var headers = key
        if let device { headers[HTTPField.Name("Depot-Installation-ID")!] = device }
        if let platform { headers[HTTPField.Name("Depot-Platform")!] = platform }
        return try await client.request(.get, "/v1/models/flowers/manifest", headers: headers).manifest()
    }

    @Test(arguments: DepotBackend.allCases) func aRequestWithoutAnInstallationIDGetsTheControlOfTheRuleItMatches(_ backend: DepotBackend)
        async throws
    {
        try await TestServer(backend).run { client in
            let key = try await prepare(client)
            let split = try await setRule(
                client, "main", #"{"conditions": [], "shares": [{"version": 1, "basisPoints": 9000}, {"version": 2, "basisPoints": 1000}]}"#
            )
            #expect(split.status == .ok, "\(split.text)")
            let ruleID = try #require(try split.decode(Rollout.self).rules.first?.id)
            for _ in 0..<3 {
                let anonymous = try await manifest(client, key)
                #expect(anonymous.version == 1 && anonymous.arm == "rule:\(ruleID)", "\(anonymous.version) \(anonymous.arm)")
            }
            // Publishing changes nothing for them: the rule names its versions.
            #expect(try await client.request(.post, "/v1/admin/models/flowers/versions/4/publish").status == .ok)
            #expect(try await manifest(client, key).version == 1)

            // The control is the version named first (it holds bucket 0), whichever number it has.
            let reversed = try await setRule(
                client, "ios",
                #"{"conditions": ["platform=ios"], "shares": [{"version": 3, "basisPoints": 1000}, {"version": 2, "basisPoints": 9000}]}"#)
            #expect(reversed.status == .conflict, "ios comes after main, which takes every device: \(reversed.text)")
            #expect(try await client.request(.delete, "/v1/admin/models/flowers/rollout/rules/main").status == .ok)
            #expect(
                try await setRule(
                    client, "ios",
                    #"{"conditions": ["platform=ios"], "shares": [{"version": 3, "basisPoints": 1000}, {"version": 2, "basisPoints": 9000}]}"#
                ).status == .ok)
            #expect(try await manifest(client, key, platform: "ios").version == 3)
            // A device no rule matches gets the default: the newest published version, here 4.
            let android = try await manifest(client, key, platform: "android")
            #expect(android.version == 4 && android.arm == "latest")
        }
    }

    @Test(arguments: DepotBackend.allCases) func aRuleNoDeviceCanReachIsRefusedUnlessAskedForAndNeverGuarded(_ backend: DepotBackend)
        async throws
    {
        try await TestServer(backend).run { client in
            _ = try await prepare(client)
            #expect(
                try await setRule(
                    client, "ios",
                    #"{"conditions": ["platform=ios", "appVersion>=3.0.0"], "shares": [{"version": 1, "basisPoints": 10000}]}"#
                ).status == .ok)
            #expect(
                try await setRule(client, "main", #"{"conditions": [], "shares": [{"version": 1, "basisPoints": 10000}]}"#).status == .ok)
            let before = try await state(client)

            let refused: [(rule: String, body: String, status: HTTPResponse.Status, says: String)] = [
                (
                    "abtest", #"{"conditions": [], "shares": [{"version": 1, "basisPoints": 5000}, {"version": 2, "basisPoints": 5000}]}"#,
                    .conflict, "Rule 'abtest' could never be used: rule 'main' comes before it"
                ),
                (
                    "ios-new", #"{"conditions": ["appVersion>=3.2.0", "platform=ios"], "shares": [{"version": 2, "basisPoints": 10000}]}"#,
                    .conflict, "rule 'ios' comes before it"
                ),
                (
                    "abtest", #"{"conditions": [], "shares": [{"version": 2, "basisPoints": 10000}], "allowShadowed": false}"#,
                    .conflict, "--allow-shadowed"
                ),
                (
                    "abtest", #"{"conditions": [], "shares": [{"version": 2, "basisPoints": 10000}], "allowShadowed": "yes"}"#,
                    .badRequest, "allowShadowed"
                ),
                // Widening the first rule to every device leaves none for the rule after it.
                (
                    "ios", #"{"conditions": [], "shares": [{"version": 1, "basisPoints": 10000}]}"#, .conflict,
                    "Rule 'main' could never be used: rule 'ios'"
                ),
            ]
            for attempt in refused {
                let response = try await setRule(client, attempt.rule, attempt.body)
                #expect(response.status == attempt.status, "\(attempt.body): \(response.text)")
                #expect(response.text.contains(attempt.says), "\(attempt.body): \(response.text)")
                #expect(try await state(client) == before, "\(attempt.body) changed the rollout")
            }

            let kept = try await setRule(
                client, "abtest", #"{"conditions": [], "shares": [{"version": 1, "basisPoints": 10000}], "allowShadowed": true}"#)
            #expect(kept.status == .ok, "\(kept.text)")
            let rollout = try kept.decode(Rollout.self)
            #expect(rollout.unreachableRules.values.sorted() == ["main"])
            // A change elsewhere is not refused for a rule that was unreachable already.
            #expect(try await client.json(.put, "/v1/admin/models/flowers/rollout/default", RolloutVersionChoice(version: 2)).status == .ok)

            let guarded = try await client.request(
                .put, "/v1/admin/models/flowers/rollout/guards/abtest", body: ByteBuffer(string: #"{"to": 2}"#))
            #expect(guarded.status == .conflict && guarded.text.contains("a guard on it would watch no device"), "\(guarded.text)")
            let guards = try await client.request(.get, "/v1/admin/models/flowers/rollout/guards").decode(RolloutGuards.self).guards
            #expect(guards.isEmpty)

            // A guarded rule stays reachable: widening the rule before it, even with allowShadowed, is refused.
            let mainGuard = try await client.request(
                .put, "/v1/admin/models/flowers/rollout/guards/main", body: ByteBuffer(string: #"{"to": 2}"#))
            #expect(mainGuard.status == .created || mainGuard.status == .ok, "\(mainGuard.text)")
            let guardedBefore = try await state(client)
            let widened = try await setRule(
                client, "ios", #"{"conditions": [], "shares": [{"version": 1, "basisPoints": 10000}], "allowShadowed": true}"#)
            #expect(widened.status == .conflict && widened.text.contains("reachable by no device"), "\(widened.text)")
            #expect(try await state(client) == guardedBefore, "the refused change changed the rollout")
        }
    }

    @Test(arguments: DepotBackend.allCases) func aSplitNamesOnlyPublishedVersionsAlsoAtZeroPercent(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            _ = try await prepare(client)
            #expect(
                try await setRule(client, "main", #"{"conditions": [], "shares": [{"version": 1, "basisPoints": 10000}]}"#).status == .ok)
            let before = try await state(client)
            let refused: [(body: String, says: String)] = [
                (
                    #"{"conditions": [], "shares": [{"version": 1, "basisPoints": 9000}, {"version": 2, "basisPoints": 1000}, {"version": 9, "basisPoints": 0}]}"#,
                    "has no published version 9"
                ),
                (
                    #"{"conditions": [], "shares": [{"version": 1, "basisPoints": 10000}, {"version": 4, "basisPoints": 0}]}"#,
                    "has no published version 4"
                ),
                (
                    #"{"conditions": [], "shares": [{"version": 1, "basisPoints": 10000}, {"version": -1, "basisPoints": 0}]}"#,
                    "has no published version -1"
                ),
                (
                    #"{"conditions": [], "shares": [{"version": 1, "basisPoints": 10000}, {"version": 9223372036854775807, "basisPoints": 0}]}"#,
                    "has no published version 9223372036854775807"
                ),
                (
                    #"{"conditions": [], "shares": [{"version": 1, "basisPoints": 10000}, {"version": 92233720368547758070, "basisPoints": 0}]}"#,
                    "JSON"
                ),
            ]
            for attempt in refused {
                let response = try await setRule(client, "main", attempt.body)
                #expect(response.status == .badRequest, "\(attempt.body): \(response.text)")
                #expect(response.text.contains(attempt.says), "\(attempt.body): \(response.text)")
                #expect(try await state(client) == before, "\(attempt.body) changed the rollout")
            }
            let named = try await setRule(
                client, "main", #"{"conditions": [], "shares": [{"version": 1, "basisPoints": 10000}, {"version": 3, "basisPoints": 0}]}"#)
            #expect(named.status == .ok, "a published version at 0%: \(named.text)")
        }
    }
}
