import Foundation
import ModelDepotRollouts
import ModelDepotShared
import Testing

/// ModelDepot's experiment arithmetic equals GrowthBook's gbstats 0.8.0 on the same aggregates
/// (Tests/Fixtures/experiments/gbstats-0.8.0.json, written by scripts/experiments/gbstats_reference.py).
@Suite struct EffectTestTests {
    struct Reference: Decodable {
        struct Arm: Decodable {
            let kind: MetricStatistic.Kind
            let n: Int
            let sum: Double
            let sumOfSquares: Double?
            var statistic: MetricStatistic { MetricStatistic(kind: kind, n: n, sum: sum, sumOfSquares: sumOfSquares) }
        }
        struct Result: Decodable {
            let difference: EffectTest.Difference
            let horizon: String
            let estimate: Double, lower: Double, upper: Double, pValue: Double
            let problem: String?
        }
        struct Case: Decodable {
            let control: Arm
            let treatment: Arm
            let results: [Result]
        }
        struct SampleRatio: Decodable {
            let shares: [Int]
            let installations: [Int]
            let pValue: Double
        }
        let cases: [Case]
        let sampleRatios: [SampleRatio]
    }

    static let reference: Reference = {
        let url = Repository.root.appendingPathComponent("Tests/Fixtures/experiments/gbstats-0.8.0.json")
        return try! JSONDecoder().decode(Reference.self, from: Data(contentsOf: url))
    }()

    /// Equal to 1e-9 of the value, or to 1e-12 for p-values gbstats computes as 1 − cdf (whose
    /// last digits are rounding).
    static func close(_ ours: Double, _ theirs: Double, absolute: Double = 0) -> Bool {
        ours == theirs || abs(ours - theirs) <= max(1e-9 * abs(theirs), absolute)
    }

    @Test func everyResultEqualsGbstats() {
        #expect(Self.reference.cases.count == 204)
        var compared = 0
        for (number, reference) in Self.reference.cases.enumerated() {
            for expected in reference.results {
                let test = EffectTest(
                    control: reference.control.statistic, treatment: reference.treatment.statistic,
                    difference: expected.difference, horizon: expected.horizon == "fixed" ? .fixed : .sequential)
                let ours = test.result
                let what = "case \(number), \(expected.difference) \(expected.horizon): ours \(ours), gbstats \(expected)"
                #expect(Self.close(ours.estimate, expected.estimate), "\(what)")
                #expect(Self.close(ours.lower, expected.lower) && Self.close(ours.upper, expected.upper), "\(what)")
                #expect(Self.close(ours.pValue, expected.pValue, absolute: 1e-12), "\(what)")
                #expect((ours.problem == nil) == (expected.problem == nil), "\(what)")
                compared += 1
            }
        }
        #expect(compared == 816)
    }

    @Test func theSampleRatioCheckEqualsGbstats() {
        #expect(Self.reference.sampleRatios.count >= 90)
        for (number, reference) in Self.reference.sampleRatios.enumerated() {
            let versions = Array(1...reference.shares.count)
            let check = SampleRatioCheck(
                rule: "r", name: "rule", shares: Dictionary(uniqueKeysWithValues: zip(versions, reference.shares)),
                observed: Dictionary(uniqueKeysWithValues: zip(versions, reference.installations)))
            let ours = check.pValue ?? .nan
            #expect(Self.close(ours, reference.pValue, absolute: 1e-15), "check \(number): ours \(ours), gbstats \(reference)")
        }
    }

    @Test func nothingIsComparedWithoutAControlMeanOrVariance() {
        let some = MetricStatistic(kind: .mean, n: 100, sum: 4_000, sumOfSquares: 170_000)
        let zero = EffectTest(control: MetricStatistic(kind: .mean, n: 100, sum: 0, sumOfSquares: 0), treatment: some).result
        #expect(zero.problem == .controlMeanIsZero && zero.pValue == 1 && zero.lower == 0 && zero.upper == 0)
        let flat = EffectTest(control: some, treatment: MetricStatistic(kind: .proportion, n: 50, sum: 50)).result
        #expect(flat.problem == .noVariance, "every installation converted: no variance")
    }

    @Test func studentTMatchesKnownQuantilesAndIsSymmetric() {
        // 0.975-quantiles (two-sided 5%) to 20 digits (mpmath, 40 digits' precision), up to near the
        // normal limit.
        let table: [(Double, Double)] = [
            (1, 12.706204736174704646), (2, 4.3026527297494638523), (10, 2.2281388519862747484),
            (30, 2.04227245630123831), (1e7, 1.9599642217672054904),
        ]
        for (dof, quantile) in table {
            let t = StudentT(degreesOfFreedom: dof)
            #expect(abs(t.quantile(0.975) - quantile) <= 1e-9 * quantile, "dof \(dof): \(t.quantile(0.975))")
            #expect(abs(t.cdf(quantile) - 0.975) < (dof > 1e5 ? 1e-11 : 1e-14), "dof \(dof): \(t.cdf(quantile))")
            #expect(abs(t.cdf(-1.3) - (1 - t.cdf(1.3))) < 1e-15)
        }
        #expect(StudentT(degreesOfFreedom: 3.5).quantile(0.5) == 0)
    }
}
