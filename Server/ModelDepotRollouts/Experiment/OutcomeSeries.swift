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

    /// What a metric's cap did: the value installations were read at most as, and how many
    /// installations it held back (their final value went past it).
    public struct Capped: Sendable, Hashable, Codable {
        public var limit: Double
        public var installations: Int

        public init(limit: Double, installations: Int) {
            self.limit = limit
            self.installations = installations
        }
    }

    /// One point per hour with rows or exposures, oldest first.
    public let points: [Point]
    /// The cap applied (`nil` without one).
    public let capped: Capped?

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
    ///   - cap: The metric's cap on each installation's value: an absolute one as it is, a
    ///     percentile one at that percentile of the installations' final values, all versions
    ///     together (the lower nearest rank, so that even a few installations' largest is held
    ///     back), applied at every hour.
    public init(kind: ExperimentMetric.Kind, rows: [OutcomeRow], exposures: [OutcomeExposure], cap: ExperimentMetric.Cap? = nil) {
        let bounds = Self.bounds(cap, kind: kind, rows: rows)
        func bounded(_ value: Double) -> Double { bounds.map { min(max(value, $0.lower), $0.upper) } ?? value }
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
                    let old = bounded(Self.value(kind, before))
                    version.sum -= old
                    version.sumOfSquares -= old * old
                } else {
                    version.n += 1
                }
                let new = bounded(Self.value(kind, after))
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
        capped = bounds.map { bounds in
            Capped(
                limit: bounds.upper,
                installations: totals.values.count {
                    let value = Self.value(kind, $0)
                    return value > bounds.upper || value < bounds.lower
                })
        }
    }

    /// The values installations are held within under `cap`, from their final totals in `rows`.
    private static func bounds(_ cap: ExperimentMetric.Cap?, kind: ExperimentMetric.Kind, rows: [OutcomeRow]) -> (
        lower: Double, upper: Double
    )? {
        guard let cap, kind != .proportion else { return nil }
        switch cap {
        case .absolute(let limit):
            return (-limit, limit)
        case .percentile(let share):
            var totals: [Key: (count: Int, sum: Double)] = [:]
            for row in rows {
                let key = Key(version: row.version, installation: row.installation)
                let known = totals[key] ?? (0, 0)
                totals[key] = (known.count + row.count, known.sum + row.sum)
            }
            let values = totals.values.map { value(kind, $0) }.sorted()
            guard !values.isEmpty else { return nil }
            return (-Double.infinity, values[Int((share * Double(values.count - 1)).rounded(.down))])
        }
    }

    private static func value(_ kind: ExperimentMetric.Kind, _ total: (count: Int, sum: Double)) -> Double {
        switch kind {
        case .proportion: total.sum > 0 ? 1 : 0
        case .sum: total.sum
        case .mean: total.count == 0 ? 0 : total.sum / Double(total.count)
        }
    }
}
