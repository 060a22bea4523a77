import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// An outcome batch as the catalog stores it: checked, its installation hashed, its events added
/// up per metric, arm, version and hour.
public struct OutcomeBatchRecord: Sendable, Hashable {
    /// The events of one metric for one version through one arm in one hour.
    public struct Total: Sendable, Hashable {
        public var metric: String
        public var arm: CountedArm
        public var version: Int
        public var hour: Int
        /// The client network it counts for (``ClientNetwork``), 0 for events guards and results
        /// do not read: without an exposure token, or past their network's hourly installations.
        public var network: Int64
        public var count: Int
        public var sum: Double
    }

    /// The first hour the batch reports a version through an arm.
    public struct Exposure: Sendable, Hashable {
        public var arm: CountedArm
        public var version: Int
        public var hour: Int
        /// The network of its events with a token (0 when none had one).
        public var network: Int64
    }

    /// The batch's id (a lower-case UUID).
    public var id: String
    /// The installation's id as a 64-bit hash (as ``UsageCounter`` keeps it).
    public var installation: Int64
    /// The hour it arrived in (hours since 1970): the hourly limit counts there.
    public var receivedHour: Int
    /// How many events it holds.
    public var events: Int
    public var totals: [Total]
    public var exposures: [Exposure]
    /// The metrics it records that are not model-health ones.
    public var appMetrics: Set<String>
    /// The events left out because their exposure token did not check (or their app metric
    /// could not be added: ``withoutAppMetrics(except:because:)``).
    public var refused = OutcomeRefusals()
    /// The index of each event of an app metric, by name.
    public var appMetricEvents: [String: [Int]] = [:]
    /// The versions it names.
    public var versions: Set<Int> { Set(exposures.map(\.version)) }
}

/// The events of a batch refused while the rest is kept, grouped by reason (so that a receipt
/// stays small however many were refused: the first message, then the indices).
public struct OutcomeRefusals: Sendable, Hashable {
    public private(set) var grouped: [OutcomeReceipt.Refusal] = []
    /// How many events were refused.
    public private(set) var count = 0

    /// Refuses event `index` for `error`.
    mutating func add(_ index: Int, _ error: DepotError) {
        count += 1
        if let position = grouped.firstIndex(where: { $0.error == error.code.rawValue }) {
            grouped[position].events.append(index)
        } else {
            grouped.append(.init(events: [index], status: Int(error.status.code), error: error.code.rawValue, message: error.message))
        }
    }
}

/// A metric of the app's, as the catalog keeps it.
public struct AppMetric: Sendable, Hashable {
    public var metric: ExperimentMetric
    /// `false` for a name recorded without being declared (read as a sum, increase is better).
    public var declared: Bool

    public init(metric: ExperimentMetric, declared: Bool) {
        self.metric = metric
        self.declared = declared
    }
}

extension AppMetric {
    /// A metric from its stored columns; a row no rule allows is the database's fault.
    static func stored(
        name: String, kind: String, direction: String, tolerance: Double, guardrail: Bool, cap: String?, declared: Bool
    ) throws -> AppMetric {
        let unreadable = DepotError(.internalError, "The catalog database holds metric '\(name.prefix(80))' that this server cannot read.")
        guard let kind = ExperimentMetric.Kind(rawValue: kind), let direction = ExperimentMetric.Direction(rawValue: direction) else {
            throw unreadable
        }
        let readCap = cap.map { try? ExperimentMetric.Cap($0) }
        guard readCap != .some(nil),
            let metric = try? ExperimentMetric(
                name: name, kind: kind, direction: direction, tolerance: tolerance, guardrail: guardrail, cap: readCap ?? nil)
        else { throw unreadable }
        return AppMetric(metric: metric, declared: declared)
    }
}

extension OutcomeBatchRecord {
    /// The batch without the events of app metrics not in `known`, each listed as refused
    /// (`invalid_metric`, with `message`): what is stored when the model has no room for a new
    /// undeclared name, so that the model-health events beside it are kept.
    func withoutAppMetrics(except known: Set<String>, because message: String) -> OutcomeBatchRecord {
        var kept = self
        let dropped = appMetrics.subtracting(known)
        kept.totals.removeAll { dropped.contains($0.metric) }
        kept.appMetrics.subtract(dropped)
        for index in dropped.flatMap({ appMetricEvents[$0] ?? [] }).sorted() {
            kept.refused.add(index, DepotError(.invalidMetric, message))
        }
        // An installation reported a version through an arm only where events of it are kept.
        kept.exposures = []
        for total in kept.totals {
            if let position = kept.exposures.firstIndex(where: { $0.arm == total.arm && $0.version == total.version }) {
                kept.exposures[position].hour = min(kept.exposures[position].hour, total.hour)
                kept.exposures[position].network = max(kept.exposures[position].network, total.network)
            } else {
                kept.exposures.append(.init(arm: total.arm, version: total.version, hour: total.hour, network: total.network))
            }
        }
        return kept
    }

    /// The batch with every event counted apart (its network past its hourly installations).
    mutating func uncount() {
        for index in totals.indices { totals[index].network = 0 }
        for index in exposures.indices { exposures[index].network = 0 }
    }

    /// The answer to the device: the events applied, or that the batch was applied before.
    func receipt(applied: Bool) -> OutcomeReceipt {
        OutcomeReceipt(
            batch: id, accepted: applied ? events - refused.count : 0, duplicate: !applied,
            refused: applied && refused.count > 0 ? refused.grouped : nil)
    }
}
