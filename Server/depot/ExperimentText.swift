import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// `depot experiment show`'s text: per arm, a table of each metric's versions against the
/// control, then the verdicts that found a difference, in words.
enum ExperimentText {
    static func rendered(_ results: ExperimentResults) -> String {
        guard !results.arms.isEmpty else {
            return
                "No arm of \(results.model) has handed out more than one version with outcomes yet: results appear once devices on two versions of one arm report events."
        }
        return results.arms.map(arm).joined(separator: "\n\n")
    }

    private static func arm(_ arm: ExperimentResults.Arm) -> String {
        let versions = arm.installations.sorted { Int($0.key) ?? 0 < Int($1.key) ?? 0 }.map { "v\($0.key) \($0.value)" }.joined(
            separator: ", ")
        var lines = [
            "\(arm.name.map { "rule \($0) (\(arm.arm))" } ?? "arm \(arm.arm)") — control: version \(arm.control); installations: \(versions)"
        ]
        if !arm.uncounted.isEmpty {
            let uncounted = arm.uncounted.sorted { Int($0.key) ?? 0 < Int($1.key) ?? 0 }.map { "v\($0.key) \($0.value)" }
            lines.append(
                "not counted: \(uncounted.joined(separator: ", ")) (no exposure token: an SDK from before 2.0, or past their network's hourly installations)"
            )
        }
        if let check = arm.sampleRatio {
            let verdict = check.pValue.map { String(format: "p %.4g", $0) } ?? "not enough installations yet"
            lines.append(
                check.mismatch
                    ? "SAMPLE RATIO MISMATCH (\(verdict)): installations are off the rule's shares; do not trust these results."
                    : "sample ratio ok (\(verdict))")
        }
        var rows: [[String]] = []
        var findings: [String] = []
        for result in arm.metrics {
            let unit = " " + ExperimentResults.unit(result.metric.judgedBy)
            if let control = result.statistics["\(arm.control)"] {
                rows.append([result.metric.name, "\(arm.control)", "\(control.n)", number(control.mean), "control", "", ""])
            }
            for effect in result.effects {
                let judged = result.metric.judgedBy == .absolute ? effect.absolute.sequential : effect.relative.sequential
                let statistic = result.statistics["\(effect.version)"]
                let estimate = judged.problem == nil ? ExperimentResults.hundredths(judged.estimate) + unit : ""
                let interval =
                    judged.problem == nil
                    ? "\(ExperimentResults.hundredths(judged.lower)) to \(ExperimentResults.hundredths(judged.upper))" : ""
                rows.append([
                    result.metric.name, "\(effect.version)", "\(statistic?.n ?? 0)", number(statistic?.mean ?? 0), estimate, interval,
                    effect.verdict.rawValue.replacingOccurrences(of: "_", with: " "),
                ])
                if effect.verdict == .better || effect.verdict == .worse { findings.append(effect.summary) }
            }
            if let capped = result.capped, capped.installations > 0 {
                findings.append(
                    "\(result.metric.name): \(capped.installations) installation(s) read as \(number(capped.limit)), the cap (\(result.metric.cap?.description ?? ""))."
                )
            }
        }
        let table = TextTable(["METRIC", "VERSION", "INSTALLATIONS", "MEAN", "EFFECT", "95% INTERVAL (ANY TIME)", "VERDICT"], rows).rendered
        return ([TerminalText.lines(lines), table] + (findings.isEmpty ? [] : [TerminalText.lines(findings)])).joined(separator: "\n")
    }

    private static func number(_ value: Double) -> String { String(format: "%.4g", value) }
}
