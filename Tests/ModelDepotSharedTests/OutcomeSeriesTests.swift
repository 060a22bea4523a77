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

    /// 200 installations of each version with a mean latency of 20 ms, one of version 1 at 1e12.
    func latencies() -> (rows: [OutcomeRow], exposures: [OutcomeExposure]) {
        var rows: [OutcomeRow] = []
        var exposures: [OutcomeExposure] = []
        for installation in 0..<400 {
            let version = installation % 2 + 1
            let value = installation == 0 ? 1e12 : Double(15 + installation % 11)
            rows.append(OutcomeRow(version: version, hour: 100, installation: Int64(installation), network: 1, count: 1, sum: value))
            exposures.append(OutcomeExposure(version: version, hour: 100, installation: Int64(installation), network: 1))
        }
        return (rows, exposures)
    }

    @Test func aPercentileCapHoldsBackTheExtremeValue() throws {
        let (rows, exposures) = latencies()
        let open = OutcomeSeries(kind: .mean, rows: rows, exposures: exposures)
        #expect(try #require(open.final[2]).mean < 30)
        #expect(try #require(open.final[1]).mean > 1e9, "uncapped, one value moves the mean")
        #expect(open.capped == nil)
        let capped = OutcomeSeries(kind: .mean, rows: rows, exposures: exposures, cap: .percentile(0.99))
        let one = try #require(capped.final[1])
        #expect(one.mean < 30 && one.n == 200, "\(one)")
        #expect(capped.capped == OutcomeSeries.Capped(limit: 25, installations: 1), "\(String(describing: capped.capped))")
    }

    @Test func anAbsoluteCapHoldsValuesWithinItBothWays() throws {
        let rows = [
            OutcomeRow(version: 1, hour: 100, installation: 1, network: 1, count: 1, sum: 9_000),
            OutcomeRow(version: 1, hour: 101, installation: 1, network: 1, count: 1, sum: 9_000),
            OutcomeRow(version: 1, hour: 100, installation: 2, network: 1, count: 1, sum: -7_000),
            OutcomeRow(version: 1, hour: 100, installation: 3, network: 1, count: 1, sum: 40),
        ]
        let series = OutcomeSeries(kind: .sum, rows: rows, exposures: [], cap: .absolute(5_000))
        let held: Double = 5_000 - 5_000 + 40
        #expect(series.final[1]?.sum == held)
        #expect(series.points.first?.statistics[1]?.sum == held, "the cap holds at every hour")
        #expect(series.capped == OutcomeSeries.Capped(limit: 5_000, installations: 2))
        let proportion = OutcomeSeries(kind: .proportion, rows: rows, exposures: [], cap: .absolute(0.5))
        #expect(proportion.capped == nil, "a proportion is 0 or 1")
    }

    @Test func capsAreReadAndCheckedAsTheCLIAndAPIGiveThem() throws {
        #expect(try ExperimentMetric.Cap("p99") == .percentile(0.99))
        #expect(try ExperimentMetric.Cap("p99.9") == .percentile(0.999))
        #expect(try ExperimentMetric.Cap("5000") == .absolute(5_000))
        #expect(ExperimentMetric.Cap.percentile(0.999).description == "p99.9" && ExperimentMetric.Cap.absolute(5_000).description == "5000")
        for cap in [
            ExperimentMetric.Cap.absolute(1e-5), .absolute(1e16), .absolute(0.1), .absolute(5_000), .percentile(0.9999), .percentile(0.5),
        ] {
            #expect(try ExperimentMetric.Cap(cap.description) == cap, "\(cap.description) reads back")
        }
        #expect(try ExperimentMetric.Cap("1e3") == .absolute(1_000))
        for bad in ["", "p", "p100", "p10", "0", "-5", "1e400", "p99%", "inf", "nan", "abc", "p 99", "p1e2"] {
            #expect(throws: DepotError.self, "\(bad)") { try ExperimentMetric.Cap(bad) }
        }
        #expect(throws: DepotError.self) { try ExperimentMetric(name: "accepted", kind: .proportion, cap: .absolute(1)) }
        #expect(throws: DepotError.self) { try ExperimentMetric(name: "seconds", kind: .mean, cap: .percentile(0.2)) }
    }
}
