import ModelDepotShared

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#endif

/// Pearson's chi-squared test of observed traffic per version against a rule's configured
/// shares: a sample-ratio mismatch means devices are not reaching the arms in the ratio the
/// rule sets (a bug in assignment, caching or logging), so the experiment's results can't be trusted.
public struct SampleRatioCheck: Sendable, Hashable, Codable {
    /// The rule's id.
    public var rule: String
    /// The rule's name.
    public var name: String
    /// Configured shares in basis points, by version (as text, for JSON).
    public var expected: [String: Int]
    /// Observed installations, by version.
    public var observed: [String: Int]
    /// The chi-squared statistic, or `nil` without enough traffic (an expected count below 5).
    public var chiSquared: Double?
    /// The p-value of the statistic, or `nil` without enough traffic.
    public var pValue: Double?
    /// Whether the traffic is off the configured shares (p < 0.001).
    public var mismatch: Bool

    /// The p-value below which a mismatch is flagged.
    public static let threshold = 0.001

    /// Tests observed counts against shares.
    /// - Parameters:
    ///   - rule: The rule's id.
    ///   - name: The rule's name.
    ///   - shares: Basis points by version; versions with 0 are left out.
    ///   - observed: Observed counts by version.
    public init(rule: String, name: String, shares: [Int: Int], observed: [Int: Int]) {
        self.rule = rule
        self.name = name
        let arms = shares.filter { $0.value > 0 }
        expected = Dictionary(uniqueKeysWithValues: arms.map { ("\($0.key)", $0.value) })
        self.observed = Dictionary(uniqueKeysWithValues: arms.map { ("\($0.key)", observed[$0.key, default: 0]) })
        let total = Double(arms.keys.reduce(0) { $0 + observed[$1, default: 0] })
        let totalShares = Double(arms.values.reduce(0, +))
        let expectedCounts = arms.mapValues { total * Double($0) / totalShares }
        guard arms.count > 1, expectedCounts.values.allSatisfy({ $0 >= 5 }) else {
            chiSquared = nil
            pValue = nil
            mismatch = false
            return
        }
        let statistic = arms.keys.reduce(0.0) { sum, version in
            let difference = Double(observed[version, default: 0]) - expectedCounts[version]!
            return sum + difference * difference / expectedCounts[version]!
        }
        chiSquared = statistic
        let p = Self.upperTailProbability(statistic, degreesOfFreedom: arms.count - 1)
        pValue = p
        mismatch = p < Self.threshold
    }

    /// P(X ≥ x) for X ~ χ²(k): the regularized upper incomplete gamma Q(k/2, x/2).
    public static func upperTailProbability(_ x: Double, degreesOfFreedom k: Int) -> Double {
        let a = Double(k) / 2
        let z = x / 2
        guard z > 0 else { return 1 }
        let logPrefix = -z + a * log(z) - lgamma(a)
        if z < a + 1 {
            // Series for the lower part P(a, z); Q = 1 - P.
            var term = 1 / a
            var sum = term
            var n = a
            for _ in 0..<1_000 {
                n += 1
                term *= z / n
                sum += term
                if abs(term) < abs(sum) * 1e-15 { break }
            }
            return max(0, 1 - sum * exp(logPrefix))
        }
        // Continued fraction for Q(a, z) (modified Lentz).
        let tiny = 1e-300
        var b = z + 1 - a
        var c = 1 / tiny
        var d = 1 / b
        var h = d
        for i in 1...1_000 {
            let an = -Double(i) * (Double(i) - a)
            b += 2
            d = an * d + b
            if abs(d) < tiny { d = tiny }
            c = b + an / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            h *= delta
            if abs(delta - 1) < 1e-15 { break }
        }
        return min(1, exp(logPrefix) * h)
    }
}
