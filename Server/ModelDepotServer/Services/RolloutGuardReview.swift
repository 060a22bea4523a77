import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// One look at a running guard: each guardrail's target against the control over the
/// installations that reported through the rule since the guard started, the target's
/// installations in the current stage, the stage's sample ratio, and what that makes the guard do.
///
/// It reads only counted outcomes: events that carried the server's exposure token, from
/// installations within their network's hourly allowance (``OutcomeRow/network`` not 0). With a
/// minimum of 2 networks or more it also leaves out, for each version, the network with the most
/// of that version's installations, so that a flood from one network can neither make a healthy
/// version regress nor hide a failing one. It acts on a regression or a sample-ratio mismatch
/// only with the guard's minimum installations over its minimum networks; a regression seen on
/// fewer pauses the guard.
struct RolloutGuardReview {
    enum Decision: Equatable {
        /// Keep watching.
        case hold
        /// The stage is done: move on.
        case advance
        /// These guardrails regressed.
        case regression([String])
        /// These guardrails regressed, over fewer installations or networks than the guard needs to act.
        case regressionOnTooFew([String])
        /// The stage's installations are off its shares.
        case mismatch
    }

    let check: RolloutGuard.Check
    let decision: Decision

    /// Reviews a guard.
    /// - Parameters:
    ///   - rolloutGuard: A running guard.
    ///   - guardrails: The metrics it watches (the model's metrics marked as guardrails).
    ///   - rows: The rule's outcome rows, by metric.
    ///   - now: The time of the look.
    init(of rolloutGuard: RolloutGuard, guardrails: [ExperimentMetric], rows: [String: [OutcomeRow]], now: Date) {
        let versions: Set = [rolloutGuard.control, rolloutGuard.target]
        let settings = rolloutGuard.settings
        let startHour = Self.hour(rolloutGuard.started)
        let stageHour = Self.hour(rolloutGuard.stageStarted)
        var window = rows.mapValues { $0.filter { $0.hour >= startHour && $0.network != 0 && versions.contains($0.version) } }
        if settings.minimumNetworks >= 2 {
            let largest = Self.largestNetworks(window.values.joined())
            window = window.mapValues { $0.filter { largest[$0.version] != $0.network } }
        }

        struct Seen: Hashable { let version: Int, installation: Int64 }
        var firstHour: [Seen: Int] = [:]
        var network: [Seen: Int64] = [:]
        var inStage: [Int64: Int64] = [:]
        var fullHours: [Int: Set<Int64>] = [:]
        for row in window.values.joined() {
            let seen = Seen(version: row.version, installation: row.installation)
            firstHour[seen] = min(firstHour[seen] ?? row.hour, row.hour)
            network[seen] = row.network
            if row.version == rolloutGuard.target, row.hour >= stageHour { inStage[row.installation] = row.network }
            if row.hour > stageHour { fullHours[row.version, default: []].insert(row.installation) }
        }
        let exposures = firstHour.map {
            OutcomeExposure(version: $0.key.version, hour: $0.value, installation: $0.key.installation, network: network[$0.key] ?? 0)
        }
        let target = network.filter { $0.key.version == rolloutGuard.target }
        let enough = target.count >= settings.minimumInstallations && Set(target.values).count >= settings.minimumNetworks
        let stageNetworks = Set(inStage.values).count

        let evidence = guardrails.compactMap { metric in
            Self.evidence(
                metric, control: rolloutGuard.control, target: rolloutGuard.target,
                statistics: OutcomeSeries(kind: metric.kind, rows: window[metric.name] ?? [], exposures: exposures, cap: metric.cap).final)
        }
        let sampleRatio =
            rolloutGuard.share < 10_000 && !fullHours.isEmpty
            ? SampleRatioCheck(
                rule: rolloutGuard.rule, name: rolloutGuard.ruleName, shares: rolloutGuard.shares,
                observed: fullHours.mapValues(\.count))
            : nil
        check = RolloutGuard.Check(
            at: now, targetInstallations: inStage.count, targetNetworks: stageNetworks, evidence: evidence, sampleRatio: sampleRatio)

        let regressed = evidence.filter(\.regression).map(\.metric)
        if !regressed.isEmpty {
            decision = enough ? .regression(regressed) : .regressionOnTooFew(regressed)
        } else if sampleRatio?.mismatch == true, enough {
            decision = .mismatch
        } else if now.timeIntervalSince(rolloutGuard.stageStarted) >= Double(settings.stageSeconds),
            inStage.count >= settings.minimumInstallations, stageNetworks >= settings.minimumNetworks
        {
            decision = .advance
        } else {
            decision = .hold
        }
    }

    /// For each version, the network with the most of its installations (the larger id on a tie).
    static func largestNetworks(_ rows: some Sequence<OutcomeRow>) -> [Int: Int64] {
        var installations: [Int: [Int64: Set<Int64>]] = [:]
        for row in rows { installations[row.version, default: [:]][row.network, default: []].insert(row.installation) }
        return installations.compactMapValues { networks in
            networks.max { ($0.value.count, $0.key) < ($1.value.count, $1.key) }?.key
        }
    }

    /// The target against the control on one guardrail, read with the sequential interval (valid
    /// at every look) of the metric's judged difference; `nil` without enough data.
    ///
    /// A proportion is compared with one success and one failure added to each version
    /// (Agresti–Caffo): a failure rate of 0 on the control has no variance, and without the
    /// adjustment a version that fails where the control never does could never be told apart.
    static func evidence(_ metric: ExperimentMetric, control: Int, target: Int, statistics: [Int: MetricStatistic]) -> RolloutGuard
        .Evidence?
    {
        guard let before = statistics[control], let after = statistics[target] else { return nil }
        let result: EffectResult
        if metric.kind == .proportion {
            func adjusted(_ statistic: MetricStatistic) -> MetricStatistic {
                MetricStatistic(kind: .proportion, n: statistic.n + 2, sum: statistic.sum + 1)
            }
            result = EffectTest(control: adjusted(before), treatment: adjusted(after), difference: .absolute, horizon: .sequential).result
        } else {
            result = EffectTest(control: before, treatment: after, difference: metric.judgedBy, horizon: .sequential).result
        }
        guard result.problem == nil, before.n > 0, after.n > 0 else { return nil }
        let regression = metric.direction == .decrease ? result.lower > metric.tolerance : result.upper < -metric.tolerance
        return RolloutGuard.Evidence(
            metric: metric.name, difference: metric.judgedBy,
            control: before, treatment: after, estimate: result.estimate, lower: result.lower,
            upper: result.upper, tolerance: metric.tolerance, regression: regression)
    }

    static func hour(_ date: Date) -> Int { Int((date.timeIntervalSince1970 / 3_600).rounded(.down)) }
}
