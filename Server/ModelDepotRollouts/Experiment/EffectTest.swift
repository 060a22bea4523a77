import Foundation
import ModelDepotShared

/// A treatment arm's effect on a metric against its control arm: Welch's two-sided t-test with
/// a fixed horizon, or a confidence sequence that stays valid however often it is looked at
/// (Waudby-Smith et al., "Time-uniform central limit theory", eq. 9 and 155). The same
/// arithmetic as GrowthBook's `gbstats` 0.8.0 (`TwoSidedTTest`, `SequentialTwoSidedTTest`).
public struct EffectTest: Sendable, Hashable {
    /// How the effect is measured.
    public enum Difference: String, Sendable, Hashable, Codable {
        /// Treatment mean minus control mean.
        case absolute
        /// That difference over the control mean (the delta method's variance).
        case relative
    }

    /// When the interval holds.
    public enum Horizon: Sendable, Hashable {
        /// At one look decided in advance.
        case fixed
        /// At every look; `tuning` is the sample size the interval is tightest at.
        case sequential(tuning: Double)

        /// GrowthBook's default tuning parameter.
        public static let sequential = Horizon.sequential(tuning: 5_000)
    }

    public var control: MetricStatistic
    public var treatment: MetricStatistic
    public var difference: Difference
    public var horizon: Horizon
    /// One minus the interval's coverage.
    public var alpha: Double

    public init(
        control: MetricStatistic, treatment: MetricStatistic, difference: Difference = .relative,
        horizon: Horizon = .fixed, alpha: Double = 0.05
    ) {
        self.control = control
        self.treatment = treatment
        self.difference = difference
        self.horizon = horizon
        self.alpha = alpha
    }

    /// The estimate, its interval and p-value; no effect (0, [0, 0], p = 1) with the reason when
    /// there is nothing to compare: a control mean of 0, or an arm without variance.
    public var result: EffectResult {
        guard control.mean != 0 else { return .none(.controlMeanIsZero) }
        guard control.variance > 0, treatment.variance > 0 else { return .none(.noVariance) }
        let estimate = difference == .relative ? (treatment.mean - control.mean) / control.mean : treatment.mean - control.mean
        let variance = self.variance
        let width: Double
        let pValue: Double
        switch horizon {
        case .fixed:
            let t = StudentT(degreesOfFreedom: degreesOfFreedom)
            width = t.quantile(1 - alpha / 2) * variance.squareRoot()
            pValue = 2 * (1 - t.cdf(abs(estimate / variance.squareRoot())))
        case .sequential(let tuning):
            let total = Double(control.n + treatment.n)
            let rho = ((-2 * log(alpha) + log(-2 * log(alpha) + 1)) / tuning).squareRoot()
            let spread = (total * rho * rho + 1)
            width = (variance * total).squareRoot() * (2 * spread * log(spread.squareRoot() / alpha) / pow(total * rho, 2)).squareRoot()
            let standardized = estimate * estimate * total / variance
            let eValue = exp(rho * rho * standardized / (2 * spread)) / spread.squareRoot()
            pValue = min(1 / eValue, 1)
        }
        return EffectResult(
            estimate: estimate, lower: estimate - width, upper: estimate + width, pValue: pValue,
            standardError: variance.squareRoot(), problem: nil)
    }

    /// The estimate's variance: the two means' for an absolute difference, the delta method's for
    /// a relative one.
    var variance: Double {
        let (a, b) = (control, treatment)
        switch difference {
        case .absolute:
            return b.variance / Double(b.n) + a.variance / Double(a.n)
        case .relative:
            return b.variance / (pow(a.mean, 2) * Double(b.n)) + a.variance * pow(b.mean, 2) / (pow(a.mean, 4) * Double(a.n))
        }
    }

    /// Welch–Satterthwaite's degrees of freedom.
    var degreesOfFreedom: Double {
        let (a, b) = (control, treatment)
        let (na, nb) = (Double(a.n), Double(b.n))
        return pow(b.variance / nb + a.variance / na, 2)
            / (pow(b.variance, 2) / (nb * nb * (nb - 1)) + pow(a.variance, 2) / (na * na * (na - 1)))
    }
}

/// What an ``EffectTest`` found.
public struct EffectResult: Sendable, Hashable, Codable {
    /// Why there is no effect to report.
    public enum Problem: String, Sendable, Hashable, Codable {
        /// The control's mean is 0: a relative effect is undefined (GrowthBook reports none either way).
        case controlMeanIsZero = "control_mean_is_zero"
        /// An arm's values do not vary (or it has fewer than two installations).
        case noVariance = "no_variance"
    }

    /// The effect's estimate (a fraction of the control mean for a relative one).
    public var estimate: Double
    /// The interval's bounds.
    public var lower: Double
    public var upper: Double
    public var pValue: Double
    public var standardError: Double
    public var problem: Problem?

    static func none(_ problem: Problem) -> EffectResult {
        EffectResult(estimate: 0, lower: 0, upper: 0, pValue: 1, standardError: 0, problem: problem)
    }
}
