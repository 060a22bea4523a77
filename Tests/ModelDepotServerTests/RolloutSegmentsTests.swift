import ModelDepotRollouts
import ModelDepotServer
import ModelDepotShared
import Testing

/// What `depot rollout show`, `depot publish` and the console say each kind of device gets.
@Suite struct RolloutSegmentsTests {
    func rule(_ name: String, _ conditions: [String], _ shares: [(Int, Int)]) throws -> Rollout.Rule {
        Rollout.Rule(
            id: "r-\(name)", name: name, salt: "s-\(name)",
            conditions: try conditions.map { text throws(DepotError) in try RolloutCondition(parsing: text) },
            split: try RolloutSplit(shares: shares))
    }

    @Test func eachSegmentSaysWhatItGetsInTheOrderTheServerDecides() throws {
        let rollout = Rollout(
            pins: [Rollout.Pin(installationID: "tester", version: 3)],
            rules: [
                try rule("ios", ["platform=ios"], [(1, 9_000), (2, 1_000)]),
                try rule("ios-new", ["platform=ios", "appVersion>=3.0.0"], [(2, 10_000)]),
            ])
        #expect(
            RolloutSegments(rollout, newestPublished: 3).lines == [
                "1 pinned device(s): their pinned version",
                "rule 'ios' (platform=ios): with an installation id v1 90%, v2 10%; without one v1",
                "rule 'ios-new' (platform=ios and appVersion>=3.0.0): unreachable, rule 'ios' before it takes all its devices",
                "devices no rule matches: v3 (newest published; no default set)",
            ])
        let everyone = Rollout(defaultVersion: 1, rules: [try rule("main", [], [(2, 1_250), (1, 8_750)])])
        #expect(
            RolloutSegments(everyone, newestPublished: 3).lines == [
                "rule 'main' (all devices): with an installation id v2 12.5%, v1 87.5%; without one v2",
                "the default is not used: rule 'main' matches every device",
            ])
        #expect(RolloutSegments(Rollout(), newestPublished: nil).lines == ["every device: nothing (no published version)"])
    }

    @Test func publishingSaysWhoGetsTheVersion() throws {
        let model = try ModelName("flowers")
        #expect(
            RolloutSegments(Rollout(), newestPublished: 2).afterPublishing(2, of: model, previous: 1)
                .hasPrefix("Every device now gets it"))
        let ios = Rollout(rules: [try rule("ios", ["platform=ios"], [(1, 10_000)])])
        #expect(
            RolloutSegments(ios, newestPublished: 2).afterPublishing(2, of: model, previous: 1)
                .hasPrefix("Devices no pin or rule covers now get it"))
        let pinned = Rollout(defaultVersion: 1)
        #expect(
            RolloutSegments(pinned, newestPublished: 2).afterPublishing(2, of: model, previous: 1)
                == "No device gets it until the rollout names it (the default stays version 1; rules name their versions). Hand it to some devices with 'depot rollout set flowers --split 1=90,2=10', or to all with 'depot rollout set flowers --default 2'."
        )
        let everyone = Rollout(rules: [try rule("main", [], [(1, 10_000)])])
        #expect(
            RolloutSegments(everyone, newestPublished: 2).afterPublishing(2, of: model, previous: 1)
                == "No device gets it yet: rule 'main' matches every device and names its versions. Add it to that rule with 'depot rollout set flowers --rule main --split 1=90,2=10'."
        )
        #expect(
            RolloutSegments(Rollout(), newestPublished: 5).afterPublishing(2, of: model, previous: 5)
                .hasPrefix("No device gets it until the rollout names it (the newest published version is still v5"))
    }
}
