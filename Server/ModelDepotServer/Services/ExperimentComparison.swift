import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// One metric of one arm: each version against the control, now and at the end of each hour.
struct ExperimentComparison {
    let metric: ExperimentMetric
    let control: Int
    let series: OutcomeSeries

    /// The most hours the series keeps (a week).
    static let maximumPoints = 168

    var result: ExperimentResults.MetricResult {
        let final = series.final
        let effects = final.keys.filter { $0 != control }.sorted().compactMap { version in
            effect(of: version, in: final)
        }
        let points = series.points.suffix(Self.maximumPoints).flatMap { point in
            point.statistics.keys.filter { $0 != control }.sorted().compactMap { version -> ExperimentResults.Point? in
                guard let control = point.statistics[control], let treatment = point.statistics[version] else { return nil }
                let result = EffectTest(control: control, treatment: treatment, difference: metric.judgedBy, horizon: .sequential).result
                guard result.problem == nil else { return nil }
                return ExperimentResults.Point(
                    hour: Date(timeIntervalSince1970: TimeInterval(point.hour * 3_600)), version: version,
                    estimate: result.estimate, lower: result.lower, upper: result.upper)
            }
        }
        return ExperimentResults.MetricResult(
            metric: metric, statistics: Dictionary(uniqueKeysWithValues: final.map { ("\($0.key)", $0.value) }),
            effects: effects, series: points, capped: series.capped)
    }

    private func effect(of version: Int, in statistics: [Int: MetricStatistic]) -> ExperimentResults.Effect? {
        guard let control = statistics[control], let treatment = statistics[version] else { return nil }
        func estimates(_ difference: EffectTest.Difference) -> ExperimentResults.Estimates {
            ExperimentResults.Estimates(
                fixed: EffectTest(control: control, treatment: treatment, difference: difference, horizon: .fixed).result,
                sequential: EffectTest(control: control, treatment: treatment, difference: difference, horizon: .sequential).result)
        }
        let (absolute, relative) = (estimates(.absolute), estimates(.relative))
        let judged = metric.judgedBy == .absolute ? absolute.sequential : relative.sequential
        let verdict = Self.verdict(judged, direction: metric.direction)
        return ExperimentResults.Effect(
            version: version, absolute: absolute, relative: relative, verdict: verdict,
            summary: summary(verdict, version: version, judged, treatment: treatment))
    }

    /// Better or worse only when the whole sequential interval lies on one side of no effect.
    static func verdict(_ result: EffectResult, direction: ExperimentMetric.Direction) -> ExperimentResults.Verdict {
        guard result.problem == nil else { return .notEnoughData }
        let rises = result.lower > 0
        let falls = result.upper < 0
        guard rises || falls else { return .inconclusive }
        return rises == (direction == .increase) ? .better : .worse
    }

    private func summary(_ verdict: ExperimentResults.Verdict, version: Int, _ result: EffectResult, treatment: MetricStatistic) -> String {
        let effect = ExperimentResults.effect(result.estimate, lower: result.lower, upper: result.upper, metric.judgedBy)
        switch verdict {
        case .better:
            return "Version \(version) is better on \(metric.name) than version \(control): \(effect), over \(treatment.n) installations."
        case .worse:
            return "Version \(version) is worse on \(metric.name) than version \(control): \(effect), over \(treatment.n) installations."
        case .inconclusive:
            return "No difference on \(metric.name) between version \(version) and version \(control) yet: \(effect); keep collecting."
        case .notEnoughData:
            let reason =
                result.problem == .controlMeanIsZero
                ? "version \(control)'s mean is 0" : "an arm has fewer than two installations or no variation"
            return "Not enough data on \(metric.name) to compare version \(version) with version \(control): \(reason)."
        }
    }
}
