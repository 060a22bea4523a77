import Foundation
import ModelDepot
import ModelDepotRollouts
import ModelDepotShared
import TestSupport
import Testing

/// Which arm a download counts for, on a real `depot serve`: the one the server signed into the
/// manifest's download URL, whether the SDK, the fast path or the router is involved; anything a
/// device names itself counts as `unknown`.
@Suite struct DownloadAttributionEndToEndTests {
    /// `flowers` v1 behind a rule that gives it to every device; returns the rule's arm.
    func ruleForEveryone(_ published: PublishedModel) async throws -> String {
        let set = try await Command.depot(
            ["rollout", "set", "flowers", "--split", "1=100", "--rule", "everyone"], environment: published.server.environment)
        #expect(set.status == 0, "\(set.error)")
        let rollout = try await Command.depot(["rollout", "show", "flowers", "--json"], environment: published.server.environment).decode(
            Rollout.self)
        return "rule:\(try #require(rollout.rules.first).id)"
    }

    /// Downloads per arm in `depot stats --json`.
    func downloads(_ published: PublishedModel) async throws -> [String: Int] {
        let stats = try await Command.depot(["stats", "flowers", "--json"], environment: published.server.environment).decode(
            ModelStats.self)
        return stats.arms.filter { $0.downloads > 0 }.reduce(into: [:]) { $0[$1.arm?.stored ?? "", default: 0] += $1.downloads }
    }

    @Test func theSDKsDownloadCountsForTheArmOfItsManifest() async throws {
        let published = try await PublishedModel()
        let arm = try await ruleForEveryone(published)
        // Ranges of 300 bytes: the download takes several requests, and only the last completes it.
        let model = try await published.downloader { $0.downloadChunkSize = 300 }.model(named: "flowers")
        #expect(model.version == 1)
        await #expect(
            try published.server.metric(#"depot_http_requests_total{route="/v1/blobs/sha256/{hex}",method="GET",status="206"}"#) == 4)
        await #expect(try downloads(published) == [arm: 1])
    }

    @Test func theFastPathAndTheRouterCountTheSameArms() async throws {
        let published = try await PublishedModel()
        let arm = try await ruleForEveryone(published)
        let server = published.server.url.absoluteString
        let key = ["-H", "Authorization: Bearer \(published.appKey)"]
        let manifest = try await Command.curl(key + ["-H", "Depot-Installation-ID: device-1", "\(server)/v1/models/flowers/manifest"])
            .manifest()
        #expect(manifest.arm == arm)
        let plain = "\(server)/v1/blobs/sha256/\(manifest.sha256)"
        let mac = try #require(manifest.downloadURL.split(separator: ".").last)
        let requests: [[String]] = [
            [server + manifest.downloadURL],
            ["-H", "Depot-Arm: rule:other", plain],
            ["-H", "Depot-Arm: rule:other", "\(plain)?arm=rule:other.\(mac)"],
        ]
        for router in [false, true] {
            let before = try await published.server.metric("depot_fast_path_answers_total")
            for request in requests {
                let status = try await Command.curl(
                    ["-o", "/dev/null", "-w", "%{http_code}"] + key + (router ? ["-H", "Connection: close"] : []) + request)
                #expect(status.text == "200", "\(request)")
            }
            let hot = try await published.server.metric("depot_fast_path_answers_total") - before
            #expect(hot == (router ? 0 : 3), "router: \(router)")
            let paths = router ? 2 : 1
            await #expect(try downloads(published) == [arm: paths, "unknown": 2 * paths], "router: \(router)")
        }
    }
}
