import ModelDepotRollouts
import ModelDepotShared
import Testing

@Suite struct SampleRatioCheckTests {
    @Test(arguments: [(3.841459, 1, 0.05), (10.827566, 1, 0.001), (5.991465, 2, 0.05), (0.0, 3, 1.0), (30.0, 4, 4.89e-6)])
    func upperTailMatchesTheChiSquaredTable(statistic: Double, degreesOfFreedom: Int, expected: Double) {
        let p = SampleRatioCheck.upperTailProbability(statistic, degreesOfFreedom: degreesOfFreedom)
        #expect(abs(p - expected) <= expected * 0.01 + 1e-9, "p(\(statistic), \(degreesOfFreedom)) = \(p)")
    }

    @Test func trafficOffTheSplitIsFlaggedAndTrafficOnItIsNot() {
        let off = SampleRatioCheck(rule: "r", name: "canary", shares: [7: 5_000, 8: 5_000], observed: [7: 900, 8: 100])
        #expect(off.mismatch)
        let on = SampleRatioCheck(rule: "r", name: "canary", shares: [7: 9_000, 8: 1_000], observed: [7: 905, 8: 95])
        #expect(!on.mismatch)
        #expect((on.pValue ?? 0) > 0.1)
        let thin = SampleRatioCheck(rule: "r", name: "canary", shares: [7: 9_900, 8: 100], observed: [7: 50])
        #expect(thin.pValue == nil && !thin.mismatch)
    }
}
