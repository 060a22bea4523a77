/// A metric an experiment reads: what each installation's value is, which way is better, and
/// how much worse a guarded rollout tolerates.
///
/// The model-health metrics (``health``) exist for every model and the SDK records them by
/// itself; an app declares its own (`depot experiment metric add flowers accepted --kind proportion`)
/// or records up to ``maximumUndeclared`` names it never declared, read as sums.
public struct ExperimentMetric: Sendable, Hashable, Codable {
    /// How an installation's events become its one value (the unit of analysis is the installation).
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// 1 when the installation recorded the metric with a value above 0, else 0, over every
        /// installation that reported anything for the version.
        case proportion
        /// The installation's total of values (0 when it recorded none), over every installation
        /// that reported anything for the version.
        case sum
        /// The installation's average value, over the installations that recorded the metric.
        case mean
    }

    /// How far one installation's value may go before results and guards read it as the cap
    /// (winsorising, as GrowthBook and Statsig do), so that a few extreme values — a stuck clock, a
    /// forged 1e12 — cannot move a sum or a mean. In JSON, `{"absolute": 5000}` or
    /// `{"percentile": 0.99}`; as text (the CLI's `--cap`, the catalog), `5000` or `p99`.
    public enum Cap: Sendable, Hashable, Codable, CustomStringConvertible {
        /// Values above `limit` are read as `limit`, values below `-limit` as `-limit`.
        case absolute(Double)
        /// Values above this percentile (0.5 to 0.9999) of the installations' values, all versions
        /// of the arm together, are read as that percentile's value.
        case percentile(Double)

        /// Checks a cap.
        /// - Throws: ``DepotError`` (`invalid_metric`) naming the value.
        public func checked() throws(DepotError) -> Cap {
            switch self {
            case .absolute(let limit) where limit.isFinite && limit > 0: return self
            case .percentile(let share) where (0.5...0.9999).contains(share): return self
            case .absolute(let limit):
                throw DepotError(.invalidMetric, "Cap \(limit) is not a positive finite number; give the largest value read, e.g. 5000.")
            case .percentile(let share):
                throw DepotError(.invalidMetric, "Percentile cap \(share) is not from 0.5 to 0.9999; e.g. p99 for the 99th percentile.")
            }
        }

        /// `5000`, `1e-05` or `p99` (`p99.9`): text ``init(_:)`` reads back as the same cap.
        public var description: String {
            switch self {
            case .absolute(let limit): Self.number(limit)
            case .percentile(let share): "p" + Self.number((share * 10_000).rounded() / 100)
            }
        }

        /// Reads `5000`, `1e-05` or `p99` (what ``description`` writes, among others).
        /// - Throws: ``DepotError`` (`invalid_metric`) for any other text, or a cap out of range.
        public init(_ text: String) throws(DepotError) {
            if text.hasPrefix("p"), let percent = Double(text.dropFirst()), text.dropFirst().allSatisfy({ $0.isNumber || $0 == "." }) {
                self = try Cap.percentile((percent * 100).rounded() / 10_000).checked()
            } else if let limit = Double(text), text.allSatisfy({ $0.isNumber || ".eE+-".contains($0) }) {
                self = try Cap.absolute(limit).checked()
            } else {
                throw DepotError(
                    .invalidMetric, "Cap '\(text.prefix(40))' is neither a number (5000) nor a percentile (p99, p99.9).")
            }
        }

        private static func number(_ value: Double) -> String {
            value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
        }

        private enum CodingKeys: String, CodingKey { case absolute, percentile }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            switch (
                try container.decodeIfPresent(Double.self, forKey: .absolute),
                try container.decodeIfPresent(Double.self, forKey: .percentile)
            ) {
            case (let limit?, nil): self = try Cap.absolute(limit).checked()
            case (nil, let share?): self = try Cap.percentile(share).checked()
            default:
                throw DepotError(.invalidMetric, "A cap is {\"absolute\": 5000} or {\"percentile\": 0.99}, one of the two.")
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .absolute(let limit): try container.encode(limit, forKey: .absolute)
            case .percentile(let share): try container.encode(share, forKey: .percentile)
            }
        }
    }

    /// Which way is better.
    public enum Direction: String, Sendable, Hashable, Codable, CaseIterable {
        case increase
        case decrease
    }

    /// 1–64 characters of `[a-z0-9_.-]`, starting with a letter.
    public var name: String
    public var kind: Kind
    public var direction: Direction
    /// The change in the harmful direction a guarded rollout tolerates, in `judgedBy`'s terms:
    /// a proportion's in absolute terms (0.01 = 1 percentage point), a sum's or mean's relative to
    /// the control (0.05 = 5 %).
    public var tolerance: Double
    /// Whether guarded rollouts watch it.
    public var guardrail: Bool
    /// The cap on each installation's value (`nil`: none; a proportion's values are 0 or 1).
    public var cap: Cap?

    /// The most names an app may record without declaring them, per model.
    public static let maximumUndeclared = 16
    /// The most metrics an app may declare per model.
    public static let maximumDeclared = 32

    /// Validates a metric.
    /// - Throws: ``DepotError`` (`invalid_metric`) saying which rule it breaks.
    public init(
        name: String, kind: Kind, direction: Direction = .increase, tolerance: Double = 0, guardrail: Bool = false, cap: Cap? = nil
    ) throws(DepotError) {
        try Self.checkName(name)
        guard tolerance.isFinite, (0...10).contains(tolerance) else {
            throw DepotError(
                .invalidMetric,
                "Tolerance \(tolerance) of metric '\(name)' is not a number from 0 to 10; give the relative change tolerated, e.g. 0.05 for 5 %."
            )
        }
        if cap != nil, kind == .proportion {
            throw DepotError(
                .invalidMetric,
                "Metric '\(name)' is a proportion: each installation's value is 0 or 1, so a cap changes nothing; leave it out.")
        }
        self.name = name
        self.kind = kind
        self.direction = direction
        self.tolerance = tolerance
        self.guardrail = guardrail
        self.cap = try cap?.checked()
    }

    init(health name: String, kind: Kind, direction: Direction, tolerance: Double, guardrail: Bool, cap: Cap? = nil) {
        self.name = name
        self.kind = kind
        self.direction = direction
        self.tolerance = tolerance
        self.guardrail = guardrail
        self.cap = cap
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            name: try container.decode(String.self, forKey: .name), kind: try container.decode(Kind.self, forKey: .kind),
            direction: try container.decodeIfPresent(Direction.self, forKey: .direction) ?? .increase,
            tolerance: try container.decodeIfPresent(Double.self, forKey: .tolerance) ?? 0,
            guardrail: try container.decodeIfPresent(Bool.self, forKey: .guardrail) ?? false,
            cap: try container.decodeIfPresent(Cap.self, forKey: .cap))
    }

    /// Refuses a name that breaks the naming rule.
    /// - Throws: ``DepotError`` (`invalid_metric`).
    public static func checkName(_ name: String) throws(DepotError) {
        let bytes = name.utf8
        func isLetter(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) }
        func isAllowed(_ byte: UInt8) -> Bool {
            isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
        }
        guard (1...64).contains(bytes.count), let first = bytes.first, isLetter(first), bytes.allSatisfy(isAllowed) else {
            throw DepotError(
                .invalidMetric,
                "Metric name '\(String(decoding: bytes.prefix(80), as: UTF8.self))' is not allowed: use 1 to 64 characters of a-z, 0-9, '_', '.' and '-', starting with a letter (for example 'accepted')."
            )
        }
    }

    /// A metric the SDK records by itself for every model.
    public enum Health: String, Sendable, CaseIterable {
        case downloadFinished = "download_finished"
        case downloadFailed = "download_failed"
        case verificationRefused = "verification_refused"
        case installed
        case loadSucceeded = "load_succeeded"
        case loadFailed = "load_failed"
        case inferences
        case inferenceFailed = "inference_failed"
        case inferenceLatency = "inference_latency_ms"

        /// The metric's definition: failures and latency are guardrails (5 % worse tolerated for
        /// the latency, none for failures); each installation's mean latency is capped at the
        /// 99th percentile.
        public var metric: ExperimentMetric {
            switch self {
            case .downloadFinished, .installed, .loadSucceeded:
                ExperimentMetric(health: rawValue, kind: .proportion, direction: .increase, tolerance: 0, guardrail: false)
            case .downloadFailed:
                ExperimentMetric(health: rawValue, kind: .proportion, direction: .decrease, tolerance: 0, guardrail: false)
            case .verificationRefused, .loadFailed, .inferenceFailed:
                ExperimentMetric(health: rawValue, kind: .proportion, direction: .decrease, tolerance: 0, guardrail: true)
            case .inferences:
                ExperimentMetric(health: rawValue, kind: .sum, direction: .increase, tolerance: 0, guardrail: false)
            case .inferenceLatency:
                ExperimentMetric(
                    health: rawValue, kind: .mean, direction: .decrease, tolerance: 0.05, guardrail: true, cap: .percentile(0.99))
            }
        }
    }

    /// Every model-health metric.
    public static let health = Health.allCases.map(\.metric)
}
