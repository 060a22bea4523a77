import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// What the experiment page renders: per arm, a plain-words verdict per version, the sample-ratio
/// check, and a tile per metric with each version's effect and its interval over time.
extension ConsolePages {
    struct EffectRow { let version: Int, verdict: String, verdictClass: String, summary: String }

    struct MetricTile {
        let id: String
        let name: String
        let about: String
        let effects: [EffectRow]
        let chart: String
    }

    struct ArmSection {
        let title: String
        let control: Int
        let installations: String
        let verdicts: [String]
        let check: CheckRow?
        let tiles: [MetricTile]
        let quiet: String?
    }

    struct ExperimentPage {
        let csrf: String
        let error: String?
        let name: String
        let arms: [ArmSection]
        let hasArms: Bool

        init(csrf: String, error: String?, name: String, results: ExperimentResults, rollout: Rollout) {
            self.csrf = csrf
            self.error = error
            self.name = name
            let unreachableRules = rollout.unreachableRules
            arms = results.arms.enumerated().map {
                ArmSection($0.element, number: $0.offset, rollout: rollout, unreachable: unreachableRules)
            }
            hasArms = !arms.isEmpty
        }
    }
}

extension ConsolePages.ArmSection {
    init(_ arm: ExperimentResults.Arm, number: Int, rollout: Rollout, unreachable: [String: String]) {
        title = arm.name.map { "rule '\($0)'" } ?? ConsolePages.arm(CountedArm(stored: arm.arm), rollout: rollout, unreachable: unreachable)
        control = arm.control
        let versions = arm.installations.keys.compactMap(Int.init).sorted()
        installations = versions.map { "v\($0) \(arm.installations["\($0)"] ?? 0)" }.joined(separator: " · ")
        check = arm.sampleRatio.map { ConsolePages.CheckRow($0, shadowedBy: unreachable[$0.rule]) }
        let measured = arm.metrics.filter { result in result.effects.contains { $0.verdict != .notEnoughData } }
        tiles = measured.enumerated().map { ConsolePages.MetricTile($0.element, id: "arm-\(number)-metric-\($0.offset)") }
        let unmeasured = arm.metrics.filter { !measured.contains($0) }.map(\.metric.name)
        quiet = unmeasured.isEmpty ? nil : "Not enough data yet on: \(unmeasured.joined(separator: ", "))."
        verdicts = versions.filter { $0 != arm.control }.map { version in
            Self.verdict(
                version, control: arm.control,
                effects: arm.metrics.compactMap { result in
                    result.effects.first { $0.version == version }.map { (result.metric.name, $0.verdict) }
                })
        }
    }

    /// `Version 2 against version 1: worse on load_failed; better on accepted; no clear difference on 4 metrics yet.`
    static func verdict(_ version: Int, control: Int, effects: [(metric: String, verdict: ExperimentResults.Verdict)]) -> String {
        func names(_ verdict: ExperimentResults.Verdict) -> [String] { effects.filter { $0.verdict == verdict }.map(\.metric) }
        var parts: [String] = []
        if !names(.worse).isEmpty { parts.append("worse on \(names(.worse).joined(separator: ", "))") }
        if !names(.better).isEmpty { parts.append("better on \(names(.better).joined(separator: ", "))") }
        let open = names(.inconclusive).count
        if open > 0 { parts.append("no clear difference on \(open) metric\(open == 1 ? "" : "s") yet") }
        if parts.isEmpty { parts.append("not enough data on any metric yet") }
        return "Version \(version) against version \(control): \(parts.joined(separator: "; "))."
    }
}

extension ConsolePages.MetricTile {
    init(_ result: ExperimentResults.MetricResult, id: String) {
        self.id = id
        name = result.metric.name
        let kind =
            switch result.metric.kind {
            case .proportion: "share of installations"
            case .sum: "total per installation"
            case .mean: "average per installation"
            }
        about =
            "\(kind), \(result.metric.direction == .increase ? "higher" : "lower") is better\(result.metric.guardrail ? ", a guardrail" : "")"
        effects = result.effects.map { effect in
            let verdict: (String, String) =
                switch effect.verdict {
                case .better: ("Better", "verdict-better")
                case .worse: ("Worse", "verdict-worse")
                case .inconclusive: ("No clear difference yet", "verdict-open")
                case .notEnoughData: ("Not enough data", "verdict-open")
                }
            return ConsolePages.EffectRow(version: effect.version, verdict: verdict.0, verdictClass: verdict.1, summary: effect.summary)
        }
        let versions = Array(Set(result.series.map(\.version))).sorted()
        chart =
            ConsoleIntervalChart(
                id: id, title: "\(result.metric.name): each version against the control, hour by hour (sequential interval)",
                unit: ExperimentResults.unit(result.metric.judgedBy),
                series: versions.map { version in
                    ConsoleIntervalChart.Series(
                        label: "v\(version)",
                        points: result.series.filter { $0.version == version }.map {
                            (hour: $0.hour, estimate: $0.estimate, lower: $0.lower, upper: $0.upper)
                        })
                }
            ).svg
    }
}
