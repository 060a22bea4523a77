import Foundation
import ModelDepotRollouts
import ModelDepotShared
import Testing

@Suite struct RolloutAssignmentTests {
    /// iOS devices from 3.2.0: 50/50 between 8 and 9; everyone else: default 7; one tester pinned to 9.
    func rollout() throws -> Rollout {
        Rollout(
            defaultVersion: 7, pins: [Rollout.Pin(installationID: "TESTER-1", version: 9)],
            rules: [
                Rollout.Rule(
                    id: "r1", name: "ios beta", salt: "r-7f3a",
                    conditions: [try RolloutCondition(parsing: "platform=ios"), try RolloutCondition(parsing: "appVersion>=3.2.0")],
                    split: try RolloutSplit(shares: [(8, 5_000), (9, 5_000)]))
            ])
    }

    @Test func pinsComeFirstThenRulesThenTheDefault() throws {
        let rollout = try rollout()
        let pinned = try #require(rollout.assignment(for: DeviceContext(installationID: "tester-1", platform: "android")))
        #expect(pinned.version == 9 && pinned.arm == .pin)

        // device-1 is in bucket 5647 for salt r-7f3a: the second half, version 9.
        let matched = try #require(rollout.assignment(for: DeviceContext(installationID: "device-1", platform: "ios", appVersion: "3.2.0")))
        #expect(matched.version == 9 && matched.arm == .rule(id: "r1"))
        // device-2 is in bucket 513: the first half, version 8.
        let other = try #require(rollout.assignment(for: DeviceContext(installationID: "device-2", platform: "ios", appVersion: "4.1")))
        #expect(other.version == 8)

        let oldApp = try #require(rollout.assignment(for: DeviceContext(installationID: "device-1", platform: "ios", appVersion: "3.1.9")))
        #expect(oldApp.version == 7 && oldApp.arm == .default)
        // Without an installation id: the matching rule's control (bucket 0's version), else the default.
        let noID = try #require(rollout.assignment(for: DeviceContext(platform: "ios", appVersion: "3.2.0")))
        #expect(noID.version == 8 && noID.arm == .rule(id: "r1"))
        let noIDNoRule = try #require(rollout.assignment(for: DeviceContext(platform: "android")))
        #expect(noIDNoRule.version == 7 && noIDNoRule.arm == .default)
        #expect(Rollout().assignment(for: DeviceContext(installationID: "x")) == nil)
        // A pin holds an id set in another case after the context was made.
        var renamed = DeviceContext(platform: "android")
        renamed.installationID = "Tester-1"
        #expect(rollout.assignment(for: renamed)?.arm == .pin)
    }

    @Test func aRolloutReadsAttributesOnlyThroughAConditionOnOne() throws {
        var rollout = try rollout()
        #expect(!rollout.readsAttributes)
        #expect(!Rollout(defaultVersion: 1).readsAttributes)
        rollout.rules.append(
            Rollout.Rule(
                id: "r2", name: "gold", salt: "r-2", conditions: [try RolloutCondition(parsing: "attributes.tier=gold")],
                split: try RolloutSplit(shares: [(8, 10_000)])))
        #expect(rollout.readsAttributes)
        #expect(try RolloutCondition(parsing: "attributes.platform=ios").readsAttribute)
        #expect(try !RolloutCondition(parsing: "platform=ios").readsAttribute)
    }

    @Test func jsonHasTheDocumentedShapeAndRejectsBadRanges() throws {
        let json = String(decoding: try JSONEncoder().encode(try rollout()), as: UTF8.self)
        for key in [#""default":7"#, #""installationID":"tester-1""#, #""salt":"r-7f3a""#, #""ranges":[{"#, #""start":5000"#] {
            #expect(json.contains(key), "\(key) in \(json)")
        }
        let overlapping = json.replacingOccurrences(of: #""start":5000"#, with: #""start":4000"#)
        #expect(throws: DepotError(.badRequest, "Ranges overlap at bucket 4000 (version 9); each bucket belongs to one version.")) {
            try JSONDecoder().decode(Rollout.self, from: Data(overlapping.utf8))
        }
    }
}
