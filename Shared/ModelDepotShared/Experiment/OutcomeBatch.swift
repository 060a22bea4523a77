import Foundation

/// What the SDK sends to `POST /v1/models/{name}/events`: one installation's outcome events for
/// one model, under an id that makes sending it again harmless.
///
/// ```json
/// {"batch": "5f0c…", "installation": "8d1e…", "dropped": 0,
///  "exposures": [{"version": 3, "arm": "rule:r-1a2b3c4d", "token": "20424.9f2c….Kq3…"}],
///  "events": [{"metric": "load_failed", "version": 3, "arm": "rule:r-1a2b3c4d", "at": 1764064800, "code": "unsupported_model"},
///             {"metric": "inference_latency_ms", "version": 3, "arm": "rule:r-1a2b3c4d", "at": 1764064801, "value": 12.5}]}
/// ```
public struct OutcomeBatch: Sendable, Hashable, Codable {
    /// One thing that happened with a version on the device.
    public struct Event: Sendable, Hashable, Codable {
        /// A model-health metric (``ExperimentMetric/Health``) or one the app records.
        public var metric: String
        /// The version the signed manifest gave the device.
        public var version: Int
        /// The manifest's arm (`default`, `pin`, `latest` or `rule:<id>`).
        public var arm: String
        /// When it happened, in whole seconds since 1970.
        public var at: Int
        /// The value (a latency in ms, a count), or with ``count`` the total of that many values;
        /// `nil` is 1 per event.
        public var value: Double?
        /// A failure's error code (`unsupported_model`, …).
        public var code: String?
        /// How many events of the same hour this one stands for (1 to ``maximumCount``; `nil` is 1):
        /// the SDK adds up its events per hour before sending them.
        public var count: Int?

        /// The largest ``count``.
        public static let maximumCount = 1_000_000

        /// Creates an event.
        public init(
            metric: String, version: Int, arm: String, at: Int, value: Double? = nil, code: String? = nil, count: Int? = nil
        ) {
            self.metric = metric
            self.version = version
            self.arm = arm
            self.at = at
            self.value = value
            self.code = code
            self.count = count
        }
    }

    /// The `Depot-Exposure` token of the manifest answer that gave the device a version through
    /// an arm: it stands for every event of that version and arm in the batch. Events with a
    /// token the server did not make for this installation, model, version and arm are refused;
    /// events without one are kept but counted apart (an SDK from before tokens): results and
    /// guards read only events with a token.
    public struct Exposure: Sendable, Hashable, Codable {
        /// The version the manifest gave.
        public var version: Int
        /// The manifest's arm.
        public var arm: String
        /// The answer's `Depot-Exposure` value.
        public var token: String

        /// Creates an exposure.
        public init(version: Int, arm: String, token: String) {
            self.version = version
            self.arm = arm
            self.token = token
        }
    }

    /// A UUID chosen by the device (``makeID(at:)``): a batch the server has applied is not applied again.
    public var batch: String
    /// The installation id the SDK sends with manifests.
    public var installation: String
    /// The events, at most ``maximumEvents``.
    public var events: [Event]
    /// Events the device dropped because its queue was full, since its last batch.
    public var dropped: Int
    /// The exposure tokens of the events' versions and arms, at most one per version and arm
    /// (absent from a batch of an SDK from before tokens).
    public var exposures: [Exposure]

    /// The most events in one batch (each may stand for ``Event/maximumCount`` of one hour).
    public static let maximumEvents = 1_000
    /// The largest body the server reads (256 KiB).
    public static let maximumSize = 256 << 10
    /// The most events (entries of ``events``) one installation may send per model in one hour;
    /// more are refused (429).
    public static let maximumEventsPerHour = 20_000
    /// How old an event may be when it arrives (7 days): a device holds older ones no longer.
    public static let maximumAge: TimeInterval = 7 * 86_400
    /// How far ahead of the server's clock an event's time may be (10 minutes of clock skew).
    public static let maximumSkew: TimeInterval = 600
    /// The largest absolute value.
    public static let maximumValue = 1e12

    /// A new batch id: a version 7 UUID (RFC 9562), the milliseconds since 1970 then random bits,
    /// in lower case. Ids made one after the other sort in time, so the server adds each to the
    /// end of its index of applied ids rather than to a random page of it.
    public static func makeID(at date: Date = Date()) -> String {
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let milliseconds = UInt64(min(max(0, date.timeIntervalSince1970 * 1_000), 0xFFFF_FFFF_FFFF))
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (40 - 8 * UInt64(index))) }
        bytes[6] = 0x70 | (bytes[6] & 0x0F)
        bytes[8] = 0x80 | (bytes[8] & 0x3F)
        let hex = bytes.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
        let text = Array(hex)
        return [text[0..<8], text[8..<12], text[12..<16], text[16..<20], text[20..<32]].map { String($0) }.joined(separator: "-")
    }

    /// Creates a batch without exposure tokens (its events are kept but not counted).
    public init(batch: String, installation: String, events: [Event], dropped: Int = 0) {
        self.init(batch: batch, installation: installation, events: events, dropped: dropped, exposures: [])
    }

    /// Creates a batch with the exposure tokens of its events' versions and arms.
    public init(batch: String, installation: String, events: [Event], dropped: Int = 0, exposures: [Exposure]) {
        self.batch = batch
        self.installation = installation
        self.events = events
        self.dropped = dropped
        self.exposures = exposures
    }

    private enum CodingKeys: String, CodingKey {
        case batch, installation, events, dropped, exposures
    }

    /// Reads a batch; one without `exposures` (an SDK from before tokens) has none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        batch = try container.decode(String.self, forKey: .batch)
        installation = try container.decode(String.self, forKey: .installation)
        events = try container.decode([Event].self, forKey: .events)
        dropped = try container.decode(Int.self, forKey: .dropped)
        exposures = try container.decodeIfPresent([Exposure].self, forKey: .exposures) ?? []
    }
}

/// The server's answer to a batch.
public struct OutcomeReceipt: Sendable, Hashable, Codable {
    /// Events the server refused for one reason while keeping the rest of their batch: their
    /// exposure tokens did not check, or their app metric is a new undeclared name the model has
    /// no room for. Sending them again would be refused again.
    public struct Refusal: Sendable, Hashable, Codable {
        /// Their indices in the batch's events, in order.
        public var events: [Int]
        /// The HTTP status the refusal stands for (403 for a token, 400 for a metric).
        public var status: Int
        /// `invalid_exposure`, `expired_exposure` or `invalid_metric`.
        public var error: String
        /// What is wrong with the first of them.
        public var message: String

        public init(events: [Int], status: Int, error: String, message: String) {
            self.events = events
            self.status = status
            self.error = error
            self.message = message
        }
    }

    /// The batch's id.
    public var batch: String
    /// The events applied (0 when the batch had been applied before).
    public var accepted: Int
    /// Whether the server had applied this batch before.
    public var duplicate: Bool
    /// The events refused, one entry per reason, when any were (absent otherwise).
    public var refused: [Refusal]?

    /// Creates a receipt.
    public init(batch: String, accepted: Int, duplicate: Bool, refused: [Refusal]? = nil) {
        self.batch = batch
        self.accepted = accepted
        self.duplicate = duplicate
        self.refused = refused
    }
}
