import Foundation
import ModelDepotRollouts
import ModelDepotShared
import Testing

@testable import ModelDepotServer

/// What a guard reads and when it acts: counted rows only, each version's largest client network
/// left out, and no rollback without the minimum installations over the minimum networks.
@Suite struct RolloutGuardReviewTests {
    static let started = Date(timeIntervalSince1970: 1_800_000_000)
    static let hour = RolloutGuardReview.hour(started)
    static let loadFailed = ExperimentMetric.health.first { $0.name == "load_failed" }!

    func guarded(minimumInstallations: Int = 20, minimumNetworks: Int = 3) throws -> RolloutGuard {
        RolloutGuard(
            rule: "r-1", ruleName: "main", control: 1, target: 2,
            settings: try RolloutGuardSettings(
                stages: [5_000, 10_000], stageSeconds: 3_600, minimumInstallations: minimumInstallations, minimumNetworks: minimumNetworks),
            state: .running, stage: 0, started: Self.started, stageStarted: Self.started)
    }

    /// `count` installations of `version` (ids from `first`) on `networks` networks in turn, each
    /// with one `load_failed` event: failing (1) or not (0).
    func rows(version: Int, count: Int, first: Int64, networks: [Int64], failing: Bool) -> [OutcomeRow] {
        (0..<count).map { index in
            OutcomeRow(
                version: version, hour: Self.hour + 1, installation: first + Int64(index), network: networks[index % networks.count],
                count: 1, sum: failing ? 1 : 0)
        }
    }

    func review(_ rows: [OutcomeRow], _ rolloutGuard: RolloutGuard) -> RolloutGuardReview {
        RolloutGuardReview(
            of: rolloutGuard, guardrails: [Self.loadFailed], rows: ["load_failed": rows],
            now: Self.started.addingTimeInterval(2 * 3_600))
    }

    let many: [Int64] = Array(1...40)

    @Test func aFloodOfFailuresFromOneNetworkIsLeftOut() throws {
        let real =
            rows(version: 1, count: 200, first: 0, networks: many, failing: false)
            + rows(version: 2, count: 200, first: 1_000, networks: many, failing: false)
        let flood = rows(version: 2, count: 100, first: 5_000, networks: [99], failing: true)
        let reviewed = review(real + flood, try guarded())
        #expect(reviewed.decision == .advance, "\(reviewed.check)")
        #expect(reviewed.check.evidence.first?.treatment.n == 200, "version 2 without its largest network, the flood")
        let trusting = review(real + flood, try guarded(minimumNetworks: 1))
        #expect(trusting.decision == .regression(["load_failed"]), "a guard told to trust one network reads it all")
    }

    @Test func aFloodOfHealthyInstallationsFromOneNetworkHidesNoFailure() throws {
        let real =
            rows(version: 1, count: 200, first: 0, networks: many, failing: false)
            + rows(version: 2, count: 200, first: 1_000, networks: many, failing: true)
        let flood = rows(version: 2, count: 2_000, first: 5_000, networks: [99], failing: false)
        #expect(review(real + flood, try guarded()).decision == .regression(["load_failed"]))
    }

    @Test func uncountedRowsAreNotRead() throws {
        let real =
            rows(version: 1, count: 200, first: 0, networks: many, failing: false)
            + rows(version: 2, count: 200, first: 1_000, networks: many, failing: false)
        let uncounted = rows(version: 2, count: 5_000, first: 5_000, networks: [0], failing: true)
        #expect(
            review(real + uncounted, try guarded(minimumNetworks: 1)).decision == .advance,
            "read whole (one network trusted), the uncounted failures are still not read")
    }

    @Test func aRegressionOnTooFewInstallationsOrNetworksPausesInsteadOfRollingBack() throws {
        let fewNetworks =
            rows(version: 1, count: 200, first: 0, networks: [1, 2], failing: false)
            + rows(version: 2, count: 200, first: 1_000, networks: [1, 2, 3], failing: true)
        #expect(review(fewNetworks, try guarded()).decision == .regressionOnTooFew(["load_failed"]), "2 networks once the largest is out")
        let fewInstallations =
            rows(version: 1, count: 200, first: 0, networks: many, failing: false)
            + rows(version: 2, count: 15, first: 1_000, networks: many, failing: true)
        #expect(review(fewInstallations, try guarded()).decision == .regressionOnTooFew(["load_failed"]))
        let enough =
            rows(version: 1, count: 200, first: 0, networks: many, failing: false)
            + rows(version: 2, count: 30, first: 1_000, networks: many, failing: true)
        #expect(review(enough, try guarded()).decision == .regression(["load_failed"]))
    }
}
