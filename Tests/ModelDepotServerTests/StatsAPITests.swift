import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotRollouts
import ModelDepotShared
import TestSupport
import Testing

@Suite struct StatsAPITests {
    func manifest(_ client: TestServer.Client, _ key: HTTPFields, _ device: String) async throws -> ModelManifest {
        var headers = key
        headers[HTTPField.Name("Depot-Installation-ID")!] = device
        return try await client.request(.get, "/v1/models/flowers/manifest", headers: headers).manifest()
    }

    @Test(arguments: DepotBackend.allCases) func statsCountManifestsAndDownloadsPerVersionAndArm(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            try await client.createModel("flowers")
            _ = try await client.upload("float_classifier", to: "flowers")
            let second = try await client.upload("int8_conv", to: "flowers").decode(ModelVersion.self)
            let key = try await client.appKey()
            let rule = RolloutRuleChange(
                conditions: [], shares: [.init(version: 1, basisPoints: 5_000), .init(version: 2, basisPoints: 5_000)])
            let rollout = try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/half", rule).decode(Rollout.self)
            let arm = "rule:\(rollout.rules[0].id)"
            var expected = [1: 0, 2: 0]
            var onSecond: ModelManifest?
            for index in 0..<400 {
                let answer = try await manifest(client, key, "device-\(index)")
                expected[answer.version, default: 0] += 1
                if answer.version == 2 { onSecond = answer }
            }

            var download = key
            let blob = try #require(onSecond).downloadURL
            #expect(blob.hasPrefix("/v1/blobs/sha256/\(second.sha256)?arm="))
            _ = try await client.request(.get, blob, headers: download)
            download[.range] = "bytes=0-9"
            _ = try await client.request(.get, blob, headers: download)
            download[.range] = "bytes=10-"
            _ = try await client.request(.get, blob, headers: download)

            let stats = try await client.request(.get, "/v1/admin/models/flowers/stats").decode(ModelStats.self)
            #expect(stats.versions.map(\.version) == [1, 2])
            #expect(stats.versions.map(\.manifests) == [expected[1], expected[2]])
            #expect(stats.versions.map(\.downloads) == [0, 2], "a whole file and a resumed tail count; a head does not")
            #expect(stats.arms.filter { $0.arm?.stored == arm }.map(\.manifests).reduce(0, +) == 400)
            #expect(stats.arms.filter { $0.arm?.stored == arm }.map(\.downloads) == [0, 2], "both downloads count for the manifest's arm")
            #expect((1...2).contains(stats.windows.count), "the requests fall in one hour window, or two at an hour's turn")
            #expect(stats.windows.flatMap(\.counts).map(\.manifests).reduce(0, +) == 400)
            let check = try #require(stats.sampleRatio.first)
            #expect(check.rule == rollout.rules[0].id && !check.mismatch, "\(check)")

            // Traffic counted under 50/50, now checked against 90/10: a mismatch.
            let skewed = RolloutRuleChange(
                conditions: [], shares: [.init(version: 1, basisPoints: 9_000), .init(version: 2, basisPoints: 1_000)])
            _ = try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/half", skewed)
            let after = try await client.request(.get, "/v1/admin/models/flowers/stats").decode(ModelStats.self)
            #expect(after.sampleRatio.first?.mismatch == true)
        }
    }

    @Test(arguments: DepotBackend.allCases) func theSampleRatioCountsInstallationsNotHowOftenTheyCheck(_ backend: DepotBackend) async throws
    {
        try await TestServer(backend).run { client in
            try await client.createModel("flowers")
            _ = try await client.upload("float_classifier", to: "flowers")
            _ = try await client.upload("int8_conv", to: "flowers")
            let key = try await client.appKey()
            let rule = RolloutRuleChange(
                conditions: [], shares: [.init(version: 1, basisPoints: 5_000), .init(version: 2, basisPoints: 5_000)])
            let rollout = try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/half", rule).decode(Rollout.self)
            var installations = [1: 0, 2: 0]
            var checks = [1: 0, 2: 0]
            for index in 0..<300 {
                let device = "DEVICE-\(index)"
                let version = try await manifest(client, key, device).version
                installations[version, default: 0] += 1
                // Installations on v2 check eleven times (the same id in other letter cases too).
                for again in 0..<(version == 2 ? 10 : 0) {
                    _ = try await manifest(client, key, again % 2 == 0 ? device : device.lowercased())
                }
                checks[version, default: 0] += version == 2 ? 11 : 1
            }
            let stats = try await client.request(.get, "/v1/admin/models/flowers/stats").decode(ModelStats.self)
            let arm = "rule:\(rollout.rules[0].id)"
            let counted = stats.arms.filter { $0.arm?.stored == arm }
            #expect(counted.map(\.installations) == [installations[1], installations[2]])
            #expect(counted.map(\.manifests) == [checks[1], checks[2]], "every check is still counted as a manifest")
            let check = try #require(stats.sampleRatio.first)
            #expect(check.observed == ["1": installations[1]!, "2": installations[2]!])
            #expect(!check.mismatch, "eleven checks per v2 installation are no reason to flag the split: \(check)")
        }
    }

    /// Model `flowers` with versions 1 and 2 behind one rule at 100% v2, an app key, and the
    /// manifest a device got from it.
    func ruleOnVersionTwo(_ client: TestServer.Client) async throws -> (key: HTTPFields, manifest: ModelManifest, arm: String) {
        try await client.createModel("flowers")
        _ = try await client.upload("float_classifier", to: "flowers")
        _ = try await client.upload("int8_conv", to: "flowers")
        let key = try await client.appKey()
        let rule = RolloutRuleChange(conditions: [], shares: [.init(version: 2, basisPoints: 10_000)])
        let rollout = try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/all", rule).decode(Rollout.self)
        let manifest = try await manifest(client, key, "device-1")
        return (key, manifest, "rule:\(rollout.rules[0].id)")
    }

    /// Downloads per arm, `nil` for arms without downloads.
    func downloads(_ client: TestServer.Client) async throws -> [String: Int] {
        let stats = try await client.request(.get, "/v1/admin/models/flowers/stats").decode(ModelStats.self)
        return stats.arms.filter { $0.downloads > 0 }.reduce(into: [:]) { $0[$1.arm?.stored ?? "", default: 0] += $1.downloads }
    }

    @Test(arguments: DepotBackend.allCases) func aDownloadCountsForTheArmTheServerAssignedNotTheOneTheDeviceNames(_ backend: DepotBackend)
        async throws
    {
        try await TestServer(backend).run { client in
            let (key, manifest, arm) = try await ruleOnVersionTwo(client)
            #expect(manifest.arm == arm && manifest.version == 2)
            let token = try #require(manifest.downloadURL.split(separator: "?arm=").last)
            let mac = try #require(token.split(separator: ".").last)
            let plain = "/v1/blobs/sha256/\(manifest.sha256)"

            // The manifest's URL, as the SDK follows it; whole, then a resumed tail.
            #expect(try await client.request(.get, manifest.downloadURL, headers: key).status == .ok)
            var tail = key
            tail[.range] = "bytes=100-"
            #expect(try await client.request(.get, manifest.downloadURL, headers: tail).status == .partialContent)
            // An app that names an arm itself: the header of older SDKs, or a token it changed.
            var forged = key
            forged[HTTPField.Name("Depot-Arm")!] = "rule:other"
            #expect(try await client.request(.get, plain, headers: forged).status == .ok)
            #expect(
                try await client.request(.get, manifest.downloadURL, headers: forged).status == .ok,
                "the header does not override the token")
            #expect(try await client.request(.get, "\(plain)?arm=rule:other.\(mac)", headers: key).status == .ok)
            #expect(try await client.request(.get, "\(plain)?arm=\(arm).AAAAAAAAAAAAAAAAAAAAAA", headers: key).status == .ok)
            #expect(try await client.request(.get, "\(plain)?arm=\(arm).%ZZ", headers: key).status == .ok)

            #expect(try await downloads(client) == [arm: 3, "unknown": 4])
        }
    }

    @Test(arguments: DepotBackend.allCases) func aTokenForOneFileDoesNotCountForAnother(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let (key, manifest, arm) = try await ruleOnVersionTwo(client)
            let first = try await client.request(.get, "/v1/admin/models/flowers/versions/1").decode(ModelVersion.self)
            let query = try #require(manifest.downloadURL.split(separator: "?").last)
            #expect(try await client.request(.get, "/v1/blobs/sha256/\(first.sha256)?\(query)", headers: key).status == .ok)
            #expect(try await downloads(client) == ["unknown": 1], "v2's token on v1's file: not \(arm)")
        }
    }

    /// On the storage directory only: ten thousand blob reads through the S3 test server take minutes,
    /// and the counters reach PostgreSQL as in every other test here.
    @Test func tenThousandMadeUpArmsAddOneCounter() async throws {
        try await TestServer().run { client in
            let (key, manifest, _) = try await ruleOnVersionTwo(client)
            let plain = "/v1/blobs/sha256/\(manifest.sha256)"
            var generator = SystemRandomNumberGenerator()
            for index in 0..<10_000 {
                let made = String(UInt64.random(in: 0...UInt64.max, using: &generator), radix: 36)
                var headers = key
                headers[.range] = "bytes=-1"
                headers[HTTPField.Name("Depot-Arm")!] = "rule:\(made)"
                let uri = index.isMultiple(of: 2) ? "\(plain)?arm=rule:\(made).\(made)" : plain
                #expect(try await client.request(.get, uri, headers: headers).status == .partialContent)
            }
            #expect(try await downloads(client) == ["unknown": 10_000])
        }
    }

    @Test(arguments: DepotBackend.allCases) func badParametersAre400(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            try await client.createModel("flowers")
            #expect(try await client.request(.get, "/v1/admin/models/flowers/stats?hours=0").status == .badRequest)
            let window = try await client.request(.get, "/v1/admin/models/flowers/stats?window=90")
            #expect(window.error?.message == "window=90 is not a whole number of minutes; use a multiple of 60 seconds.")
            #expect(try await client.request(.get, "/v1/admin/models/nothing/stats").status == .notFound)
        }
    }
}
