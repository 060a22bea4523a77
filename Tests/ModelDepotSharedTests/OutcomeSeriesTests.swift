import ModelDepotRollouts
import ModelDepotShared
import TestSupport
import Testing

/// ``OutcomeSeries`` against the definition: at the end of every hour, each installation's value
/// made from all its rows up to then, summed over installations.
@Suite struct OutcomeSeriesTests {
    @Test(arguments: ExperimentMetric.Kind.allCases)
    func everyPointEqualsTheStatisticsComputedFromScratch(_ kind: ExperimentMetric.Kind) {
        var generator = SeededGenerator(seed: 25)
        for _ in 0..<50 {
            let installations = Int.random(in: 1...40, using: &generator)
            var exposures: [OutcomeExposure] = []
            var rows: [OutcomeRow] = []
            for installation in 0..<installations {
                let version = Int.random(in: 1...3, using: &generator)
                let first = Int.random(in: 100...110, using: &generator)
                exposures.append(OutcomeExposure(version: version, hour: first, installation: Int64(installation), network: 1))
                for hour in first..<(first + Int.random(in: 0...4, using: &generator)) where Bool.random(using: &generator) {
                    let count = Int.random(in: 1...5, using: &generator)
                    let value =
                        kind == .proportion
                        ? Double(Int.random(in: 0...1, using: &generator)) : Double.random(in: -5...50, using: &generator)
                    rows.append(
                        OutcomeRow(
                            version: version, hour: hour, installation: Int64(installation), network: 1, count: count,
                            sum: value * Double(count)))
                }
            }
            let series = OutcomeSeries(kind: kind, rows: rows.shuffled(using: &generator), exposures: exposures)
            #expect(series.points.map(\.hour) == Set(rows.map(\.hour) + exposures.map(\.hour)).sorted())
            for point in series.points {
                let expected = Self.fromScratch(
                    kind, rows: rows.filter { $0.hour <= point.hour }, exposures: exposures.filter { $0.hour <= point.hour })
                #expect(Set(point.statistics.keys) == Set(expected.keys))
                for (version, statistic) in expected {
                    let got = point.statistics[version]
                    #expect(got?.n == statistic.n && got?.kind == statistic.kind)
                    #expect(abs((got?.sum ?? .nan) - statistic.sum) <= 1e-9 * max(1, abs(statistic.sum)))
                    #expect(abs((got?.sumOfSquares ?? .nan) - statistic.sumOfSquares) <= 1e-9 * max(1, statistic.sumOfSquares))
                }
            }
        }
    }

    static func fromScratch(_ kind: ExperimentMetric.Kind, rows: [OutcomeRow], exposures: [OutcomeExposure]) -> [Int: MetricStatistic] {
        var statistics: [Int: MetricStatistic] = [:]
        for version in Set(exposures.map(\.version)) {
            let exposed = exposures.filter { $0.version == version }.map(\.installation)
            let values: [Double] = exposed.compactMap { installation in
                let own = rows.filter { $0.version == version && $0.installation == installation }
                let (count, sum) = own.reduce((0, 0.0)) { ($0.0 + $1.count, $0.1 + $1.sum) }
                switch kind {
                case .proportion: return sum > 0 ? 1 : 0
                case .sum: return sum
                case .mean: return count == 0 ? nil : sum / Double(count)
                }
            }
            statistics[version] = MetricStatistic(
                kind: kind.statistic, n: values.count, sum: values.reduce(0, +),
                sumOfSquares: values.map { $0 * $0 }.reduce(0, +))
        }
        return statistics
    }
}
