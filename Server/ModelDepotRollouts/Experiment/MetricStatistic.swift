import ModelDepotShared

/// What an experiment knows of one metric in one arm, over installations (the unit of analysis):
/// how many installations, the sum of their values and the sum of their squares. A proportion's
/// values are 0 or 1, so its sum of squares is its sum.
public struct MetricStatistic: Sendable, Hashable, Codable {
    /// How the metric's values are read.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// Any number per installation (a latency, a count).
        case mean
        /// 0 or 1 per installation (a load failed or not, a conversion).
        case proportion
    }

    public var kind: Kind
    /// Installations.
    public var n: Int
    public var sum: Double
    /// The sum of squared values (a proportion's is its sum).
    public var sumOfSquares: Double

    public init(kind: Kind, n: Int, sum: Double, sumOfSquares: Double? = nil) {
        self.kind = kind
        self.n = n
        self.sum = sum
        self.sumOfSquares = kind == .proportion ? sum : sumOfSquares ?? sum
    }

    /// The mean value per installation (0 without installations).
    public var mean: Double { n == 0 ? 0 : sum / Double(n) }

    /// The sample variance per installation: a proportion's p(1 − p), a mean's unbiased
    /// estimate (0 with fewer than two installations).
    public var variance: Double {
        switch kind {
        case .proportion:
            return mean * (1 - mean)
        case .mean:
            guard n > 1 else { return 0 }
            let n = Double(n)
            return (sumOfSquares - sum * sum / n) / (n - 1)
        }
    }
}
