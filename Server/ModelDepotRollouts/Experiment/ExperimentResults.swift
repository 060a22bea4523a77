import Foundation
import ModelDepotShared

/// What `GET /v1/admin/models/{name}/experiment` answers: for every arm that handed out more than
/// one version, each metric's versions against the arm's control version.
public struct ExperimentResults: Sendable, Hashable, Codable {
    /// A fixed-horizon and a sequential result of one effect.
    public struct Estimates: Sendable, Hashable, Codable {
        /// Valid at one look decided in advance.
        public var fixed: EffectResult
        /// Valid however often it is looked at (tuning 5,000, as GrowthBook's default).
        public var sequential: EffectResult

        public init(fixed: EffectResult, sequential: EffectResult) {
            self.fixed = fixed
            self.sequential = sequential
        }
    }

    /// What the sequential interval of the metric's judged difference (``ExperimentMetric/judgedBy``)
    /// says, read with the metric's direction.
    public enum Verdict: String, Sendable, Hashable, Codable {
        /// The whole interval lies on the good side.
        case better
        /// The whole interval lies on the harmful side.
        case worse
        /// The interval holds no effect and effects both ways.
        case inconclusive
        /// An arm has fewer than two installations, no variance, or the control's mean is 0.
        case notEnoughData = "not_enough_data"
    }

    /// One version's effect against the control.
    public struct Effect: Sendable, Hashable, Codable {
        public var version: Int
        public var absolute: Estimates
        public var relative: Estimates
        public var verdict: Verdict
        /// The verdict as a sentence.
        public var summary: String

        public init(version: Int, absolute: Estimates, relative: Estimates, verdict: Verdict, summary: String) {
            self.version = version
            self.absolute = absolute
            self.relative = relative
            self.verdict = verdict
            self.summary = summary
        }
    }

    /// A version's sequential effect (in the metric's judged difference) at the end of one hour.
    public struct Point: Sendable, Hashable, Codable {
        public var hour: Date
        public var version: Int
        public var estimate: Double
        public var lower: Double
        public var upper: Double

        public init(hour: Date, version: Int, estimate: Double, lower: Double, upper: Double) {
            self.hour = hour
            self.version = version
            self.estimate = estimate
            self.lower = lower
            self.upper = upper
        }
    }

    /// One metric in one arm.
    public struct MetricResult: Sendable, Hashable, Codable {
        public var metric: ExperimentMetric
        /// Installations, sum and sum of squares per version (as text, for JSON).
        public var statistics: [String: MetricStatistic]
        public var effects: [Effect]
        /// The effects over time (hours with data, at most the last 168).
        public var series: [Point]
        /// What the metric's cap did (`nil` without one): the statistics read each installation's
        /// value as at most its limit.
        public var capped: OutcomeSeries.Capped?

        public init(
            metric: ExperimentMetric, statistics: [String: MetricStatistic], effects: [Effect], series: [Point],
            capped: OutcomeSeries.Capped? = nil
        ) {
            self.metric = metric
            self.statistics = statistics
            self.effects = effects
            self.series = series
            self.capped = capped
        }
    }

    /// One arm that handed out several versions.
    public struct Arm: Sendable, Hashable, Codable {
        /// `rule:<id>`, `default`, …
        public var arm: String
        /// The rule's name, when the arm is a rule of the current rollout.
        public var name: String?
        /// The version the others are compared with (the oldest that reported).
        public var control: Int
        /// Installations whose outcomes count for each version (as text, for JSON): they
        /// carried the server's exposure token, within their network's hourly installations.
        public var installations: [String: Int]
        /// Installations that reported each version with no counted outcome (an SDK from before
        /// exposure tokens, or past their network's hourly installations): kept, not compared.
        public var uncounted: [String: Int]
        /// Reported installations against the rule's current shares (`nil` when the arm is not a
        /// rule of the current rollout).
        public var sampleRatio: SampleRatioCheck?
        public var metrics: [MetricResult]

        public init(
            arm: String, name: String?, control: Int, installations: [String: Int], uncounted: [String: Int] = [:],
            sampleRatio: SampleRatioCheck?, metrics: [MetricResult]
        ) {
            self.arm = arm
            self.name = name
            self.control = control
            self.installations = installations
            self.uncounted = uncounted
            self.sampleRatio = sampleRatio
            self.metrics = metrics
        }

        private enum CodingKeys: String, CodingKey { case arm, name, control, installations, uncounted, sampleRatio, metrics }

        /// Reads results from a server from before uncounted installations (none listed).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            arm = try container.decode(String.self, forKey: .arm)
            name = try container.decodeIfPresent(String.self, forKey: .name)
            control = try container.decode(Int.self, forKey: .control)
            installations = try container.decode([String: Int].self, forKey: .installations)
            uncounted = try container.decodeIfPresent([String: Int].self, forKey: .uncounted) ?? [:]
            sampleRatio = try container.decodeIfPresent(SampleRatioCheck.self, forKey: .sampleRatio)
            metrics = try container.decode([MetricResult].self, forKey: .metrics)
        }
    }

    /// A fraction as a signed number of hundredths with one decimal, as results print effects
    /// (`+26.0` for 0.26: percent of a relative effect, percentage points of a proportion's).
    public static func hundredths(_ fraction: Double) -> String {
        let value = (fraction * 1_000).rounded() / 10
        return (value > 0 ? "+" : "") + String(format: "%.1f", value)
    }

    /// `points` (of percentage) for an absolute difference, `%` for a relative one.
    public static func unit(_ difference: EffectTest.Difference) -> String { difference == .absolute ? "points" : "%" }

    /// An effect and its interval for people: `+26.0 points (+11.6 to +40.4)`, `+3.1 % (-1.0 to +7.2)`.
    public static func effect(_ estimate: Double, lower: Double, upper: Double, _ difference: EffectTest.Difference) -> String {
        "\(hundredths(estimate)) \(unit(difference)) (\(hundredths(lower)) to \(hundredths(upper)))"
    }

    public var model: ModelName
    /// When the results were computed.
    public var generated: Date
    /// Every metric the model's results read: the model-health ones, then the app's.
    public var metrics: [ExperimentMetric]
    public var arms: [Arm]

    public init(model: ModelName, generated: Date, metrics: [ExperimentMetric], arms: [Arm]) {
        self.model = model
        self.generated = generated
        self.metrics = metrics
        self.arms = arms
    }
}
