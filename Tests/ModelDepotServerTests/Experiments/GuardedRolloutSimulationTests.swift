import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotRollouts
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepotServer

/// Guarded rollouts against simulated fleets on a live server (SQLite): a version that fails to
/// load on some devices is rolled back by itself, a neutral one walks every stage, a sample-ratio
/// mismatch pauses, and an improved app metric shows in the results.
@Suite(.serialized) struct GuardedRolloutSimulationTests {
    func server(_ clock: MovableClock) async throws -> TestServer {
        try await GuardedRolloutFleet.server(clock: clock)
    }

    @Test func aVersionThatFailsToLoadOnFivePercentOfDevicesIsRolledBackBeforeItPassesTheFivePercentStage() async throws {
        let clock = MovableClock()
        try await server(clock).run(live: true) { client in
            let key = try await GuardedRolloutFleet.prepare(client, clock: clock, devices: 5_000)
            let failing = GuardedRolloutFleet.Share(1, in: 20)
            let fleet = GuardedRolloutFleet(client: client, key: key, clock: clock, devices: 5_000) { device, version in
                .init(loadFails: version == 2 && failing.contains(device, on: 2))
            }
            try await fleet.hour()
            _ = try await GuardedRolloutFleet.start(client, minimumInstallations: 25)
            let (rolledBack, shares) = try await fleet.simulate(hours: 8)

            #expect(rolledBack.state == .rolledBack, "\(rolledBack.moves.map(\.reason))")
            #expect(!shares.contains { $0 > 500 }, "the guard never went past 5 %: \(shares)")
            let move = try #require(rolledBack.moves.last)
            #expect(move.kind == .rolledBack && move.by == "guard")
            #expect(move.reason.contains("load_failed") && move.reason.contains("Rolled rule 'main' back to version 1"), "\(move.reason)")
            let evidence = try #require(move.check?.evidence.first { $0.metric == "load_failed" })
            #expect(evidence.regression && evidence.lower > 0)
            #expect(
                evidence.treatment.mean > 0.03 && evidence.treatment.mean < 0.07, "about 5 % of version 2's devices: \(evidence.treatment)")
            #expect(evidence.control.sum == 0)
            #expect(move.check?.evidence.filter(\.regression).map(\.metric) == ["load_failed"], "no other guardrail regressed")

            let rollout = try await client.request(.get, "/v1/admin/models/flowers/rollout").decode(Rollout.self)
            #expect(rollout.rules.first?.split.shares == [1: 10_000])
            let history = try await client.request(.get, "/v1/admin/models/flowers/rollout/history").decode(RolloutHistory.self)
            let last = try #require(history.changes.last)
            #expect(last.keyID == "guard" && last.reason == move.reason, "the rollout history keeps the evidence")
            let after = try await fleet.hour()
            #expect(after == [1: 5_000], "every device is back on version 1: \(after)")

            let shown = ConsolePages.GuardSection(rolledBack)
            #expect(shown.status.hasPrefix("Rolled back at 0 %"), "the console's rollout page: \(shown.status)")
            #expect(
                shown.stages.map(\.state) == ["passed", "rolled back here", "not reached", "not reached", "not reached"]
                    || shown.stages.map(\.state) == ["rolled back here", "not reached", "not reached", "not reached", "not reached"],
                "\(shown.stages.map(\.state))")
            #expect(shown.moves.last?.by == "the guard" && shown.moves.last?.reason == move.reason)
        }
    }

    @Test func aNeutralVersionWalksEveryStageToAHundredPercent() async throws {
        let clock = MovableClock()
        try await server(clock).run(live: true) { client in
            let key = try await GuardedRolloutFleet.prepare(client, clock: clock, devices: 1_000)
            let fleet = GuardedRolloutFleet(client: client, key: key, clock: clock, devices: 1_000) { _, _ in .init() }
            try await fleet.hour()
            // The first stage gives version 2 about 10 of the 1,000 devices (the rule's salt is new
            // each run; `prepare` draws it again when they would be fewer than 5, or on too few
            // networks for the guard).
            _ = try await GuardedRolloutFleet.start(client, minimumInstallations: 2)
            let (completed, shares) = try await fleet.simulate(hours: 10)

            #expect(completed.state == .completed, "\(completed.moves.map(\.reason))")
            #expect(completed.moves.map(\.kind) == [.started, .advanced, .advanced, .advanced, .completed])
            #expect(shares == [100, 500, 2_500, 5_000, 10_000], "one stage an hour after the first look: \(shares)")
            let rollout = try await client.request(.get, "/v1/admin/models/flowers/rollout").decode(Rollout.self)
            #expect(rollout.rules.first?.split.shares == [2: 10_000])
            let after = try await fleet.hour()
            #expect(after == [2: 1_000])
        }
    }

    @Test func aSampleRatioMismatchPausesTheRollout() async throws {
        let clock = MovableClock()
        try await server(clock).run(live: true) { client in
            let key = try await GuardedRolloutFleet.prepare(client, clock: clock, devices: 2_000)
            // Four in ten devices on version 2 stop reporting (as if it crashed the app first): the
            // last 4 of every 10 it gets, so that the first stage's 5 or more devices all report
            // and it passes. Picked by the device's index, the silent ones were once so many of
            // the first stage's that it held for every hour of the test.
            let reporting = GuardedRolloutFleet.Share(6, in: 10)
            let fleet = GuardedRolloutFleet(client: client, key: key, clock: clock, devices: 2_000) { device, version in
                .init(reports: version != 2 || reporting.contains(device, on: 2))
            }
            try await fleet.hour()
            // One network is enough here: which networks the reporting devices are on is not
            // what this test is about.
            _ = try await GuardedRolloutFleet.start(client, minimumInstallations: 5, minimumNetworks: 1)
            let (paused, _) = try await fleet.simulate(hours: 6)

            #expect(paused.state == .paused, "\(paused.moves.map(\.reason))")
            let move = try #require(paused.moves.last)
            #expect(move.kind == .paused && move.reason.contains("Sample-ratio mismatch"), "\(move.reason)")
            #expect(move.check?.sampleRatio?.mismatch == true)
            let rollout = try await client.request(.get, "/v1/admin/models/flowers/rollout").decode(Rollout.self)
            #expect(rollout.rules.first?.split.shares == paused.shares, "a pause keeps the stage's split")

            let resumed = try await client.request(.post, "/v1/admin/models/flowers/rollout/guards/main/resume").decode(RolloutGuard.self)
            #expect(resumed.state == .running && resumed.moves.last?.kind == .resumed)
            let again = try await client.request(.post, "/v1/admin/models/flowers/rollout/guards/main/resume")
            #expect(again.status == .conflict, "only a paused guard resumes")
        }
    }

    @Test func aVersionThatImprovesAnAppMetricShowsASignificantPositiveEffect() async throws {
        let clock = MovableClock()
        try await server(clock).run(live: true) { client in
            let key = try await GuardedRolloutFleet.prepare(client, clock: clock)
            let declared = try await client.json(.put, "/v1/admin/models/flowers/metrics/accepted", MetricDeclaration(kind: .proportion))
            #expect(declared.status == .ok)
            let split = RolloutRuleChange(
                conditions: [], shares: [.init(version: 1, basisPoints: 5_000), .init(version: 2, basisPoints: 5_000)])
            #expect(try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/main", split).status == .ok)
            // 30 % of version 1's users accept an answer, 40 % of version 2's.
            let (before, after) = (GuardedRolloutFleet.Share(3, in: 10), GuardedRolloutFleet.Share(4, in: 10))
            let fleet = GuardedRolloutFleet(client: client, key: key, clock: clock, devices: 2_000) { device, version in
                .init(accepts: (version == 2 ? after : before).contains(device, on: version))
            }
            try await fleet.hour()
            let results = try await client.request(.get, "/v1/admin/models/flowers/experiment").decode(ExperimentResults.self)
            let accepted = try #require(results.arms.first?.metrics.first { $0.metric.name == "accepted" })
            let effect = try #require(accepted.effects.first)
            #expect(effect.version == 2 && effect.verdict == .better, "\(effect.summary)")
            #expect(
                effect.absolute.sequential.lower > 0 && abs(effect.absolute.sequential.estimate - 0.1) < 0.01,
                "\(effect.absolute.sequential)")
            let health = results.arms.first?.metrics.filter { $0.metric.guardrail }.flatMap(\.effects).map(\.verdict) ?? []
            #expect(!health.contains(.worse), "no guardrail is worse: \(health)")
        }
    }
}
