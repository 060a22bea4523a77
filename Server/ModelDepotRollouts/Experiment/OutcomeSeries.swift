import ModelDepotShared

/// One installation's events of one metric for one version in one hour, as the catalog keeps them.
public struct OutcomeRow: Sendable, Hashable {
    public var version: Int
    /// The hour (hours since 1970).
    public var hour: Int
    /// The installation's id as a 64-bit hash.
    public var installation: Int64
    /// The client network its events came from with the server's exposure token; 0 for events
    /// kept apart (no token, or past the network's hourly installations), which results and
    /// guards do not read.
    public var network: Int64
    /// Events recorded.
    public var count: Int
    /// Their values' total.
    public var sum: Double

    public init(version: Int, hour: Int, installation: Int64, network: Int64, count: Int, sum: Double) {
        self.version = version
        self.hour = hour
        self.installation = installation
        self.network = network
        self.count = count
        self.sum = sum
    }
}

/// An installation's first report of a version (through one arm), as the catalog keeps it.
public struct OutcomeExposure: Sendable, Hashable {
    public var version: Int
    /// The hour it first reported anything for the version.
    public var hour: Int
    public var installation: Int64
    /// The network of its counted events (0 when it has none).
    public var network: Int64

    public init(version: Int, hour: Int, installation: Int64, network: Int64) {
        self.version = version
        self.hour = hour
        self.installation = installation
        self.network = network
    }
}

/// Turns one arm's stored rows of a metric into per-version statistics over installations, as
/// they stood at the end of each hour: each installation's value is made from all its events up
/// to then (``ExperimentMetric/Kind``), so the unit of analysis is the installation however many
/// hours it reported in.
public struct OutcomeSeries: Sendable {
    /// The statistics at the end of one hour.
    public struct Point: Sendable, Hashable {
        public var hour: Int
        public var statistics: [Int: MetricStatistic]
    }

    /// One point per hour with rows or exposures, oldest first.
    public let points: [Point]

    /// The statistics after the last hour (empty without rows).
    public var final: [Int: MetricStatistic] { points.last?.statistics ?? [:] }

    private struct Key: Hashable {
        let version: Int
        let installation: Int64
    }

    private struct Sums {
        var n = 0
        var sum = 0.0
        var sumOfSquares = 0.0
    }

    /// Builds the series.
    /// - Parameters:
    ///   - kind: How an installation's events make its value.
    ///   - rows: The metric's rows, in any order.
    ///   - exposures: The arm's installations per version with the hour each first reported.
    public init(kind: ExperimentMetric.Kind, rows: [OutcomeRow], exposures: [OutcomeExposure]) {
        let rowsByHour = Dictionary(grouping: rows, by: \.hour)
        let exposuresByHour = Dictionary(grouping: exposures, by: \.hour)
        var totals: [Key: (count: Int, sum: Double)] = [:]
        var exposed: [Int: Int] = [:]
        var sums: [Int: Sums] = [:]
        var points: [Point] = []
        for hour in Set(rowsByHour.keys).union(exposuresByHour.keys).sorted() {
            for exposure in exposuresByHour[hour] ?? [] { exposed[exposure.version, default: 0] += 1 }
            for row in rowsByHour[hour] ?? [] {
                let key = Key(version: row.version, installation: row.installation)
                let before = totals[key]
                let after = (count: (before?.count ?? 0) + row.count, sum: (before?.sum ?? 0) + row.sum)
                totals[key] = after
                var version = sums[row.version] ?? Sums()
                if let before {
                    let old = Self.value(kind, before)
                    version.sum -= old
                    version.sumOfSquares -= old * old
                } else {
                    version.n += 1
                }
                let new = Self.value(kind, after)
                version.sum += new
                version.sumOfSquares += new * new
                sums[row.version] = version
            }
            var statistics: [Int: MetricStatistic] = [:]
            for version in Set(exposed.keys).union(sums.keys) {
                let total = sums[version] ?? Sums()
                // A mean is over the installations that recorded the metric; a proportion and a sum
                // are over every installation that reported the version (the others count 0).
                let n = kind == .mean ? total.n : max(exposed[version] ?? 0, total.n)
                statistics[version] = MetricStatistic(kind: kind.statistic, n: n, sum: total.sum, sumOfSquares: total.sumOfSquares)
            }
            points.append(Point(hour: hour, statistics: statistics))
        }
        self.points = points
    }

    private static func value(_ kind: ExperimentMetric.Kind, _ total: (count: Int, sum: Double)) -> Double {
        switch kind {
        case .proportion: total.sum > 0 ? 1 : 0
        case .sum: total.sum
        case .mean: total.count == 0 ? 0 : total.sum / Double(total.count)
        }
    }
}
