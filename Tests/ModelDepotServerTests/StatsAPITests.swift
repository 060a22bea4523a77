import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotShared
import Testing

@Suite struct StatsAPITests {
    func manifest(_ client: TestServer.Client, _ key: HTTPFields, _ device: String) async throws -> ModelManifest {
        var headers = key
        headers[HTTPField.Name("Depot-Installation-ID")!] = device
        return try await client.request(.get, "/v1/models/flowers/manifest", headers: headers).manifest()
    }

    @Test func statsCountManifestsAndDownloadsPerVersionAndArm() async throws {
        try await TestServer().run { client in
            try await client.createModel("flowers")
            _ = try await client.upload("float_classifier", to: "flowers")
            let second = try await client.upload("int8_conv", to: "flowers").decode(ModelVersion.self)
            let key = try await client.appKey()
            let rule = RolloutRuleChange(conditions: [], shares: [.init(version: 1, basisPoints: 5_000), .init(version: 2, basisPoints: 5_000)])
            let rollout = try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/half", rule).decode(Rollout.self)
            let arm = "rule:\(rollout.rules[0].id)"
            var expected = [1: 0, 2: 0]
            for index in 0..<400 { expected[try await manifest(client, key, "device-\(index)").version, default: 0] += 1 }

            var download = key
            download[HTTPField.Name("Depot-Arm")!] = arm
            let blob = "/v1/blobs/sha256/\(second.sha256)"
            _ = try await client.request(.get, blob, headers: download)
            download[.range] = "bytes=0-9"
            _ = try await client.request(.get, blob, headers: download)
            download[.range] = "bytes=10-"
            _ = try await client.request(.get, blob, headers: download)

            let stats = try await client.request(.get, "/v1/admin/models/flowers/stats").decode(ModelStats.self)
            #expect(stats.versions.map(\.version) == [1, 2])
            #expect(stats.versions.map(\.manifests) == [expected[1], expected[2]])
            #expect(stats.versions.map(\.downloads) == [0, 2], "a whole file and a resumed tail count; a head does not")
            #expect(stats.arms.filter { $0.arm == arm }.map(\.manifests).reduce(0, +) == 400)
            #expect((1...2).contains(stats.windows.count), "the requests fall in one hour window, or two at an hour's turn")
            #expect(stats.windows.flatMap(\.counts).map(\.manifests).reduce(0, +) == 400)
            let check = try #require(stats.sampleRatio.first)
            #expect(check.rule == rollout.rules[0].id && !check.mismatch, "\(check)")

            // Traffic counted under 50/50, now checked against 90/10: a mismatch.
            let skewed = RolloutRuleChange(conditions: [], shares: [.init(version: 1, basisPoints: 9_000), .init(version: 2, basisPoints: 1_000)])
            _ = try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/half", skewed)
            let after = try await client.request(.get, "/v1/admin/models/flowers/stats").decode(ModelStats.self)
            #expect(after.sampleRatio.first?.mismatch == true)
        }
    }

    @Test func theSampleRatioCountsInstallationsNotHowOftenTheyCheck() async throws {
        try await TestServer().run { client in
            try await client.createModel("flowers")
            _ = try await client.upload("float_classifier", to: "flowers")
            _ = try await client.upload("int8_conv", to: "flowers")
            let key = try await client.appKey()
            let rule = RolloutRuleChange(conditions: [], shares: [.init(version: 1, basisPoints: 5_000), .init(version: 2, basisPoints: 5_000)])
            let rollout = try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/half", rule).decode(Rollout.self)
            var installations = [1: 0, 2: 0]
            var checks = [1: 0, 2: 0]
            for index in 0..<300 {
                let device = "DEVICE-\(index)"
                let version = try await manifest(client, key, device).version
                installations[version, default: 0] += 1
                // Installations on v2 check eleven times (the same id in other letter cases too).
                for again in 0..<(version == 2 ? 10 : 0) { _ = try await manifest(client, key, again % 2 == 0 ? device : device.lowercased()) }
                checks[version, default: 0] += version == 2 ? 11 : 1
            }
            let stats = try await client.request(.get, "/v1/admin/models/flowers/stats").decode(ModelStats.self)
            let arm = "rule:\(rollout.rules[0].id)"
            let counted = stats.arms.filter { $0.arm == arm }
            #expect(counted.map(\.installations) == [installations[1], installations[2]])
            #expect(counted.map(\.manifests) == [checks[1], checks[2]], "every check is still counted as a manifest")
            let check = try #require(stats.sampleRatio.first)
            #expect(check.observed == ["1": installations[1]!, "2": installations[2]!])
            #expect(!check.mismatch, "eleven checks per v2 installation are no reason to flag the split: \(check)")
        }
    }

    @Test func badParametersAre400() async throws {
        try await TestServer().run { client in
            try await client.createModel("flowers")
            #expect(try await client.request(.get, "/v1/admin/models/flowers/stats?hours=0").status == .badRequest)
            let window = try await client.request(.get, "/v1/admin/models/flowers/stats?window=90")
            #expect(window.error?.message == "window=90 is not a whole number of minutes; use a multiple of 60 seconds.")
            #expect(try await client.request(.get, "/v1/admin/models/nothing/stats").status == .notFound)
        }
    }
}
