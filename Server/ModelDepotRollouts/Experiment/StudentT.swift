import Foundation
import ModelDepotShared

/// Student's t distribution with any positive, not necessarily whole, degrees of freedom (the
/// Welch–Satterthwaite approximation gives fractional ones): its distribution function and its
/// quantiles. The distribution function is good to about 1e-14 for the degrees of freedom of
/// tens of thousands of installations, and to 1e-11 at 10⁷ (the continued fraction loses digits
/// there); a quantile inverts it to the last bit.
public struct StudentT: Sendable, Hashable {
    /// The degrees of freedom, positive.
    public let degreesOfFreedom: Double

    public init(degreesOfFreedom: Double) {
        self.degreesOfFreedom = degreesOfFreedom
    }

    /// P(T ≤ t): half the regularized incomplete beta I(ν/(ν+t²); ν/2, 1/2) on either side.
    public func cdf(_ t: Double) -> Double {
        guard t.isFinite else { return t > 0 ? 1 : 0 }
        let nu = degreesOfFreedom
        let tail = 0.5 * Self.regularizedIncompleteBeta(nu / (nu + t * t), complement: t * t / (nu + t * t), a: nu / 2, b: 0.5)
        return t > 0 ? 1 - tail : tail
    }

    /// The density at `t`.
    public func pdf(_ t: Double) -> Double {
        let nu = degreesOfFreedom
        let logNormalizer = lgamma((nu + 1) / 2) - lgamma(nu / 2) - 0.5 * log(nu * Double.pi)
        return exp(logNormalizer - (nu + 1) / 2 * log1p(t * t / nu))
    }

    /// The `p`-quantile (0 < p < 1): Newton's method on ``cdf(_:)``, kept inside a bracket that
    /// halves whenever a step would leave it.
    public func quantile(_ p: Double) -> Double {
        guard p > 0, p < 1 else { return p <= 0 ? -.infinity : .infinity }
        if p < 0.5 { return -quantile(1 - p) }
        if p == 0.5 { return 0 }
        var low = 0.0
        var high = 1.0
        while cdf(high) < p { (low, high) = (high, high * 2) }
        var t = (low + high) / 2
        for _ in 0..<200 {
            let error = cdf(t) - p
            if error > 0 { high = t } else { low = t }
            var next = t - error / pdf(t)
            if !(next > low && next < high) { next = (low + high) / 2 }
            if abs(next - t) <= 1e-15 * abs(t) { return next }
            t = next
        }
        return t
    }

    /// I(x; a, b), by its continued fraction (modified Lentz) on whichever side converges fast.
    /// `complement` is 1 − x, computed apart so that neither logarithm loses digits when x is
    /// near 0 or 1 (as it is with many degrees of freedom).
    static func regularizedIncompleteBeta(_ x: Double, complement y: Double, a: Double, b: Double) -> Double {
        guard x > 0 else { return 0 }
        guard y > 0 else { return 1 }
        let logX = x > 0.5 ? log1p(-y) : log(x)
        let logY = y > 0.5 ? log1p(-x) : log(y)
        let logPrefix = logGammaRatio(max(a, b), min(a, b)) - lgamma(min(a, b)) + a * logX + b * logY
        if x < (a + 1) / (a + b + 2) {
            return exp(logPrefix) * continuedFraction(x, a: a, b: b) / a
        }
        return 1 - exp(logPrefix) * continuedFraction(y, a: b, b: a) / b
    }

    /// log Γ(a + b) − log Γ(a). For a large a by Stirling's series of the difference, which does
    /// not subtract two large logarithms (with 10⁷ degrees of freedom they are near 8·10⁷).
    static func logGammaRatio(_ a: Double, _ b: Double) -> Double {
        guard a > 100 else { return lgamma(a + b) - lgamma(a) }
        func correction(_ z: Double) -> Double {
            let z2 = z * z
            return (1.0 / 12 - (1.0 / 360 - 1.0 / (1_260 * z2)) / z2) / z
        }
        return (a - 0.5) * log1p(b / a) + b * log(a + b) - b + correction(a + b) - correction(a)
    }

    private static func continuedFraction(_ x: Double, a: Double, b: Double) -> Double {
        let tiny = 1e-300
        var c = 1.0
        var d = 1 - (a + b) * x / (a + 1)
        if abs(d) < tiny { d = tiny }
        d = 1 / d
        var h = d
        for m in 1...100_000 {
            let m = Double(m)
            let even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
            d = 1 + even * d
            if abs(d) < tiny { d = tiny }
            c = 1 + even / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            h *= d * c
            let odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
            d = 1 + odd * d
            if abs(d) < tiny { d = tiny }
            c = 1 + odd / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            h *= delta
            if abs(delta - 1) < 1e-16 { break }
        }
        return h
    }
}
