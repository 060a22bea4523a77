import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotRollouts
import ModelDepotShared
import TestSupport
import Testing

/// Guarded rollouts against someone with the app key alone (``ForgedInstallations``, from one
/// network), beside a simulated fleet of devices spread over many networks: 10,000 made-up
/// installations reporting load failures, absurd latencies and healthy control loads neither
/// roll back nor pause a healthy version; 10,000 reporting a failing version healthy do not carry
/// it forward, and the real devices still roll it back. A tenth of the flood with the defences
/// turned off (every installation counted, one network trusted) does roll the healthy version
/// back: the attack is real, and the defences are what stops it.
@Suite(.serialized) struct OutcomeAttackTests {
    static let attacker = "203.0.113.66"
    /// 5 % of 1,000 devices is 50 on the new version at the first stage.
    static let stages = [500, 2_500, 5_000, 10_000]

    /// The failures, and a latency of 1e12 ms, a flood reports for version 2; version 1 loads fine.
    static let failures: @Sendable (Int) -> [ForgedInstallations.Event]? = { version in
        version == 2
            ? [
                .init(metric: "installed"), .init(metric: "load_failed", code: "unsupported_operator"),
                .init(metric: "inference_latency_ms", value: 1e12),
            ]
            : [.init(metric: "installed"), .init(metric: "load_succeeded")]
    }

    /// Hours of the fleet checking and reporting, `forged` made-up installations (from
    /// `Self.attacker`) in the first, each hour reviewed half an hour in; the guard after each review.
    func attack(_ fleet: GuardedRolloutFleet, _ forged: ForgedInstallations, count: Int, hours: Int, clock: MovableClock) async throws
        -> [RolloutGuard]
    {
        var reviews: [RolloutGuard] = []
        for hour in 0..<hours {
            try await fleet.hour()
            if hour == 0 { _ = try await forged.send(count, from: 0, at: Int(clock.now.timeIntervalSince1970)) }
            clock.advance(by: 1_800)
            reviews.append(try await fleet.review())
            clock.advance(by: 1_800)
            if reviews.last?.state != .running { break }
        }
        return reviews
    }

    @Test(arguments: DepotBackend.allCases)
    func tenThousandForgedFailingInstallationsNeitherRollBackNorPauseAHealthyVersion(_ backend: DepotBackend) async throws {
        let clock = MovableClock()
        try await GuardedRolloutFleet.server(backend, clock: clock).run(live: true) { client in
            let key = try await GuardedRolloutFleet.prepare(client, clock: clock, devices: 1_000)
            let fleet = GuardedRolloutFleet(client: client, key: key, clock: clock, devices: 1_000) { _, _ in .init() }
            try await fleet.hour()
            _ = try await GuardedRolloutFleet.start(client, stages: Self.stages, minimumInstallations: 25)
            let forged = ForgedInstallations(client: client, key: key, address: Self.attacker, report: Self.failures)
            let reviews = try await attack(fleet, forged, count: 10_000, hours: 2, clock: clock)

            let last = try #require(reviews.last)
            #expect(last.state == .running, "\(last.moves.map(\.reason))")
            #expect(!last.moves.contains { $0.kind == .rolledBack || $0.kind == .paused }, "\(last.moves.map(\.reason))")
            #expect(
                reviews.map(\.share) == [500, 2_500], "the real fleet carried it to its next stage: \(reviews.map { $0.lastCheck as Any })")
            let results = try await client.request(.get, "/v1/admin/models/flowers/experiment").decode(ExperimentResults.self)
            let arm = try #require(results.arms.first)
            #expect(
                arm.uncounted.values.reduce(0, +) > 9_000,
                "the flood was kept, apart: \(arm.uncounted), counted \(arm.installations)")
        }
    }

    @Test func withoutTheDefencesAThousandForgedInstallationsRollBackTheHealthyVersion() async throws {
        let clock = MovableClock()
        var server = try await GuardedRolloutFleet.server(clock: clock)
        server.configuration.outcomeInstallationsPerNetwork = 1_000_000
        try await server.run(live: true) { client in
            let key = try await GuardedRolloutFleet.prepare(client, clock: clock, devices: 1_000)
            let fleet = GuardedRolloutFleet(client: client, key: key, clock: clock, devices: 1_000) { _, _ in .init() }
            try await fleet.hour()
            _ = try await GuardedRolloutFleet.start(client, stages: Self.stages, minimumInstallations: 25, minimumNetworks: 1)
            let forged = ForgedInstallations(client: client, key: key, address: Self.attacker, report: Self.failures)
            let reviews = try await attack(fleet, forged, count: 1_000, hours: 1, clock: clock)
            let last = try #require(reviews.last)
            #expect(last.state == .rolledBack, "\(last.moves.map(\.reason))")
            #expect(last.moves.last?.reason.contains("load_failed") == true, "\(last.moves.map(\.reason))")
        }
    }

    @Test(arguments: DepotBackend.allCases)
    func tenThousandForgedHealthyInstallationsDoNotCarryAFailingVersionForward(_ backend: DepotBackend) async throws {
        let clock = MovableClock()
        try await GuardedRolloutFleet.server(backend, clock: clock).run(live: true) { client in
            let key = try await GuardedRolloutFleet.prepare(client, clock: clock, devices: 1_000)
            let failing = GuardedRolloutFleet.Share(1, in: 4)
            let fleet = GuardedRolloutFleet(client: client, key: key, clock: clock, devices: 1_000) { device, version in
                .init(loadFails: version == 2 && failing.contains(device, on: 2))
            }
            try await fleet.hour()
            _ = try await GuardedRolloutFleet.start(client, stages: Self.stages, minimumInstallations: 25)
            let healthy = ForgedInstallations(client: client, key: key, address: Self.attacker) { version in
                version == 2
                    ? [.init(metric: "installed"), .init(metric: "load_succeeded"), .init(metric: "inference_latency_ms", value: 1)]
                    : nil
            }
            let reviews = try await attack(fleet, healthy, count: 10_000, hours: 3, clock: clock)

            let last = try #require(reviews.last)
            #expect(last.state == .rolledBack, "\(last.moves.map(\.reason))")
            #expect(reviews.allSatisfy { $0.share == 500 }, "it never went past 5 %: \(reviews.map(\.share))")
            #expect(last.moves.last?.reason.contains("load_failed") == true, "\(last.moves.map(\.reason))")
        }
    }
}
