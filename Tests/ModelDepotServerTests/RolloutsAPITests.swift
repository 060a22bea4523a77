import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotRollouts
import ModelDepotShared
import TestSupport
import Testing

@Suite struct RolloutsAPITests {
    /// A model with published versions 1, 2 and 3, and an app key.
    func prepare(_ client: TestServer.Client) async throws -> HTTPFields {
        try await client.createModel("flowers")
        for fixture in ["float_classifier", "int8_conv", "dynamic_batch"] { _ = try await client.upload(fixture, to: "flowers") }
        return try await client.appKey()
    }

    func manifest(_ client: TestServer.Client, _ key: HTTPFields, device: String?, platform: String? = nil) async throws -> ModelManifest {
        var headers = key
        if let device { headers[HTTPField.Name("Depot-Installation-ID")!] = device }
        if let platform { headers[HTTPField.Name("Depot-Platform")!] = platform }
        return try await client.request(.get, "/v1/models/flowers/manifest", headers: headers).manifest()
    }

    func rule(_ conditions: [String], _ shares: [(Int, Int)]) -> RolloutRuleChange {
        RolloutRuleChange(conditions: conditions, shares: shares.map { .init(version: $0.0, basisPoints: $0.1) })
    }

    @Test(arguments: DepotBackend.allCases) func manifestFollowsPinsRulesAndTheDefault(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let key = try await prepare(client)
            #expect(try await manifest(client, key, device: "device-1").arm == "latest")
            #expect(try await manifest(client, key, device: "device-1").version == 3)

            #expect(try await client.json(.put, "/v1/admin/models/flowers/rollout/default", RolloutVersionChoice(version: 1)).status == .ok)
            let ios = try await client.json(
                .put, "/v1/admin/models/flowers/rollout/rules/ios-half", rule(["platform=ios"], [(1, 5_000), (2, 5_000)]))
            #expect(ios.status == .ok, "\(ios.text)")
            let rollout = try ios.decode(Rollout.self)
            let ruleID = try #require(rollout.rules.first?.id)
            let salt = try #require(rollout.rules.first?.salt)

            for index in 0..<40 {
                let device = "device-\(index)"
                let expected = try RolloutSplit(shares: [(1, 5_000), (2, 5_000)])
                    .version(forBucket: RolloutBucket.bucket(salt: salt, installationID: device))
                let answer = try await manifest(client, key, device: device, platform: "iOS")
                #expect(answer.version == expected && answer.arm == "rule:\(ruleID)", "\(device)")
            }
            let android = try await manifest(client, key, device: "device-1", platform: "android")
            #expect(android.version == 1 && android.arm == "default")

            _ = try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/canada", rule(["country=CA"], [(3, 10_000)]))
            var fromCDN = key
            fromCDN[HTTPField.Name("Depot-Installation-ID")!] = "device-1"
            fromCDN[HTTPField.Name("CF-IPCountry")!] = "ca"
            #expect(try await client.request(.get, "/v1/models/flowers/manifest", headers: fromCDN).manifest().version == 3)

            _ = try await client.json(.put, "/v1/admin/models/flowers/rollout/pins/TESTER-7", RolloutVersionChoice(version: 3))
            let tester = try await manifest(client, key, device: "tester-7", platform: "ios")
            #expect(tester.version == 3 && tester.arm == "pin")
            #expect(try await client.request(.delete, "/v1/admin/models/flowers/rollout/pins/tester-7").status == .ok)
            #expect(try await manifest(client, key, device: "tester-7", platform: "ios").arm == "rule:\(ruleID)")
        }
    }

    @Test(arguments: DepotBackend.allCases) func raisingAShareKeepsTheSaltAndMovesOnlyNewDevices(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let key = try await prepare(client)
            let first = try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/canary", rule([], [(1, 9_000), (2, 1_000)]))
                .decode(Rollout.self)
            var before: [String: Int] = [:]
            for index in 0..<300 { before["d\(index)"] = try await manifest(client, key, device: "d\(index)").version }
            let second = try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/canary", rule([], [(1, 8_000), (2, 2_000)]))
                .decode(Rollout.self)
            #expect(second.rules.map(\.salt) == first.rules.map(\.salt))
            var moved = 0
            for index in 0..<300 {
                let now = try await manifest(client, key, device: "d\(index)").version
                if before["d\(index)"] == 2 { #expect(now == 2, "d\(index) left version 2") }
                if now != before["d\(index)"] { moved += 1 }
            }
            #expect(moved > 0 && moved < 75, "\(moved) of 300 devices moved for a 10% change")
        }
    }

    @Test(arguments: DepotBackend.allCases) func everyRolloutChangeSignsNewManifestsWhileAssignmentsStay(_ backend: DepotBackend)
        async throws
    {
        try await TestServer(backend).run { client in
            var key = try await prepare(client)
            key[HTTPField.Name("Depot-Installation-ID")!] = "device-1"
            let first = try await client.request(.get, "/v1/models/flowers/manifest", headers: key)
            #expect(try await client.request(.get, "/v1/models/flowers/manifest", headers: key).headers[.eTag] == first.headers[.eTag])
            _ = try await client.json(.put, "/v1/admin/models/flowers/rollout/pins/someone-else", RolloutVersionChoice(version: 1))
            let unchanged = try await client.request(.get, "/v1/models/flowers/manifest", headers: key)
            #expect(unchanged.headers[.eTag] != first.headers[.eTag])
            #expect(try unchanged.manifest().version == first.manifest().version && unchanged.manifest().arm == first.manifest().arm)
            #expect(try unchanged.manifest().manifestVersion > first.manifest().manifestVersion)
            _ = try await client.json(.put, "/v1/admin/models/flowers/rollout/pins/device-1", RolloutVersionChoice(version: 1))
            let changed = try await client.request(.get, "/v1/models/flowers/manifest", headers: key)
            #expect(try changed.manifest().arm == "pin")
        }
    }

    @Test(arguments: DepotBackend.allCases) func invalidChangesAre400AndLeaveTheRolloutInForce(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            _ = try await prepare(client)
            _ = try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/canary", rule([], [(1, 9_000), (2, 1_000)]))
            let before = try await client.request(.get, "/v1/admin/models/flowers/rollout").decode(Rollout.self)
            _ = try await client.upload("while_loop", to: "flowers", query: "publish=false")

            let cases: [(RolloutRuleChange, String)] = [
                (rule([], [(1, 9_000), (2, 500)]), "The shares add up to 95.0%, not 100%."),
                (rule([], [(1, 5_000), (1, 5_000)]), "Version 1 appears twice in the split"),
                (rule([], [(1, 5_000), (9, 5_000)]), "Model 'flowers' has no published version 9"),
                (rule([], [(1, 5_000), (4, 5_000)]), "Model 'flowers' has no published version 4"),
                (rule(["color=red"], [(1, 10_000)]), "Condition field 'color' is unknown"),
                (rule(["appVersion>=x"], [(1, 10_000)]), "'x' is not a version"),
            ]
            for (change, message) in cases {
                let response = try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/canary", change)
                #expect(response.status == .badRequest, "\(message)")
                #expect(response.error?.message.contains(message) == true, "\(response.error?.message ?? "") should contain \(message)")
            }
            #expect(
                try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/Bad%20Name", rule([], [(1, 10_000)])).status
                    == .badRequest)
            #expect(try await client.request(.delete, "/v1/admin/models/flowers/rollout/rules/nothing").status == .notFound)
            #expect(try await client.request(.get, "/v1/admin/models/flowers/rollout").decode(Rollout.self) == before)
        }
    }

    @Test(arguments: DepotBackend.allCases) func versionsTheRolloutHandsOutCannotBeUnpublishedOrDeleted(_ backend: DepotBackend)
        async throws
    {
        try await TestServer(backend).run { client in
            _ = try await prepare(client)
            _ = try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/canary", rule([], [(1, 9_000), (2, 1_000)]))
            let unpublish = try await client.request(.post, "/v1/admin/models/flowers/versions/2/unpublish")
            #expect(unpublish.status == .conflict)
            #expect(unpublish.error?.message.contains("rule 'canary'") == true)
            #expect(try await client.request(.delete, "/v1/admin/models/flowers/versions/1").status == .conflict)
            #expect(try await client.request(.delete, "/v1/admin/models/flowers/rollout/rules/canary").status == .ok)
            #expect(try await client.request(.delete, "/v1/admin/models/flowers/versions/1").status == .noContent)
        }
    }

    @Test(arguments: DepotBackend.allCases) func everyChangeIsInTheAuditLogWithItsKey(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            _ = try await prepare(client)
            _ = try await client.json(.put, "/v1/admin/models/flowers/rollout/default", RolloutVersionChoice(version: 2))
            _ = try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/canary", rule([], [(1, 10_000)]))
            _ = try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/canary", rule([], [(1, 10_000), (9, 0)]))
            let history = try await client.request(.get, "/v1/admin/models/flowers/rollout/history").decode(RolloutHistory.self)
            #expect(history.changes.count == 2, "an unchanged rollout adds no entry")
            #expect(history.changes[0].before == Rollout() && history.changes[0].after.defaultVersion == 2)
            #expect(history.changes[1].after.rules.map(\.name) == ["canary"])
            let admin = try await client.request(.get, "/v1/admin/keys").decode(AccessKeyList.self).keys.first { $0.kind == .admin }
            #expect(history.changes.allSatisfy { $0.keyID == admin?.id })
        }
    }
}
