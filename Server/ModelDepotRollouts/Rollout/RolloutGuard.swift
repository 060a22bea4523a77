import Foundation
import ModelDepotShared

/// A guarded rollout: one rule's target version takes a rising share of the rule's devices, stage
/// by stage, while guardrail metrics are compared with the control version that holds the rest.
/// A stage advances by itself once it has lasted its minimum duration, the target has its minimum
/// installations in it and no guardrail shows a regression; a regression or a sample-ratio mismatch
/// rolls the rule back to the control version (or pauses it, per the settings). Every move, with
/// its reason and evidence, is kept in ``moves`` and posted to the webhook.
///
/// Its JSON is what `GET /v1/admin/models/{name}/rollout/guards` lists and
/// `depot rollout guard status MODEL --json` prints.
public struct RolloutGuard: Sendable, Hashable, Codable {
    /// Where the guard stands.
    public enum State: String, Sendable, Hashable, Codable {
        /// Watching, and advancing when a stage is done.
        case running
        /// Holding the current shares until someone resumes or stops it.
        case paused
        /// The rule gives every device the control version again.
        case rolledBack = "rolled_back"
        /// The target reached 100 %.
        case completed
        /// Stopped by a person, or because the rule was changed outside the guard.
        case stopped

        /// Whether the guard still owns its rule's split (a person must stop it to change the rule).
        public var ownsRule: Bool { self == .running || self == .paused }
    }

    /// What a regression or a sample-ratio mismatch makes the guard do.
    public enum Action: String, Sendable, Hashable, Codable, CaseIterable {
        /// The rule goes back to 100 % of the control version.
        case rollback
        /// The shares stay; the guard waits for a person.
        case pause
    }

    /// One guardrail's comparison at a move: the target against the control over the guard's
    /// installations, with the sequential interval of the metric's judged difference.
    public struct Evidence: Sendable, Hashable, Codable {
        public var metric: String
        /// `absolute` for a proportion (percentage points), `relative` for a sum or mean.
        public var difference: EffectTest.Difference
        public var control: MetricStatistic
        public var treatment: MetricStatistic
        public var estimate: Double
        public var lower: Double
        public var upper: Double
        /// The harmful change tolerated.
        public var tolerance: Double
        /// Whether the whole interval lies on the harmful side beyond the tolerance.
        public var regression: Bool

        public init(
            metric: String, difference: EffectTest.Difference, control: MetricStatistic, treatment: MetricStatistic,
            estimate: Double, lower: Double, upper: Double, tolerance: Double, regression: Bool
        ) {
            self.metric = metric
            self.difference = difference
            self.control = control
            self.treatment = treatment
            self.estimate = estimate
            self.lower = lower
            self.upper = upper
            self.tolerance = tolerance
            self.regression = regression
        }
    }

    /// What the guard saw at one look.
    public struct Check: Sendable, Hashable, Codable {
        public var at: Date
        /// Installations that reported the target version since the stage began (counted ones,
        /// without the version's largest network when the guard leaves it out).
        public var targetInstallations: Int
        /// The client networks those installations came from (`nil` in checks from before
        /// networks were counted).
        public var targetNetworks: Int?
        /// Every guardrail with enough data to compare.
        public var evidence: [Evidence]
        /// Installations per version in the stage's full hours against its shares (`nil` before
        /// the stage has a full hour, or at 100 %).
        public var sampleRatio: SampleRatioCheck?

        public init(at: Date, targetInstallations: Int, targetNetworks: Int?, evidence: [Evidence], sampleRatio: SampleRatioCheck?) {
            self.at = at
            self.targetInstallations = targetInstallations
            self.targetNetworks = targetNetworks
            self.evidence = evidence
            self.sampleRatio = sampleRatio
        }
    }

    /// A webhook delivery of one move.
    public struct Delivery: Sendable, Hashable, Codable {
        /// Sent as `Depot-Delivery`; the same on every attempt.
        public var id: String
        public var attempts: Int
        /// When the receiver answered 2xx.
        public var delivered: Date?
        /// When the next attempt is due (`nil` once delivered or given up).
        public var nextAttempt: Date?
        /// The last failure, for people.
        public var lastError: String?

        public init(id: String, attempts: Int = 0, delivered: Date? = nil, nextAttempt: Date?, lastError: String? = nil) {
            self.id = id
            self.attempts = attempts
            self.delivered = delivered
            self.nextAttempt = nextAttempt
            self.lastError = lastError
        }
    }

    /// One step in the guard's timeline.
    public struct Move: Sendable, Hashable, Codable {
        public enum Kind: String, Sendable, Hashable, Codable {
            case started, advanced, completed, paused, resumed, stopped
            case rolledBack = "rolled_back"
        }

        public var kind: Kind
        public var at: Date
        /// The target's share after the move, in basis points.
        public var share: Int
        /// Why, in plain words.
        public var reason: String
        /// The id of the key that asked for it, or `guard` for the guard's own moves.
        public var by: String
        /// What the guard saw when it moved by itself.
        public var check: Check?
        /// The webhook's delivery (`nil` without a webhook).
        public var delivery: Delivery?

        public init(kind: Kind, at: Date, share: Int, reason: String, by: String, check: Check? = nil, delivery: Delivery? = nil) {
            self.kind = kind
            self.at = at
            self.share = share
            self.reason = reason
            self.by = by
            self.check = check
            self.delivery = delivery
        }
    }

    /// The rule's id.
    public var rule: String
    /// The rule's name.
    public var ruleName: String
    /// The version the rule gave every device before; it keeps the rest and is rolled back to.
    public var control: Int
    /// The version rolled out.
    public var target: Int
    public var settings: RolloutGuardSettings
    public var state: State
    /// The index of the current stage in ``RolloutGuardSettings/stages``.
    public var stage: Int
    public var started: Date
    public var stageStarted: Date
    /// The latest look, whether or not it moved anything.
    public var lastCheck: Check?
    /// Every move, oldest first.
    public var moves: [Move]

    public init(
        rule: String, ruleName: String, control: Int, target: Int, settings: RolloutGuardSettings, state: State,
        stage: Int, started: Date, stageStarted: Date, lastCheck: Check? = nil, moves: [Move] = []
    ) {
        self.rule = rule
        self.ruleName = ruleName
        self.control = control
        self.target = target
        self.settings = settings
        self.state = state
        self.stage = stage
        self.started = started
        self.stageStarted = stageStarted
        self.lastCheck = lastCheck
        self.moves = moves
    }

    /// The target's share at the current stage, in basis points.
    public var share: Int { settings.stages[stage] }

    /// Whether the server has something to do for it: review it (running) or post a move (a
    /// webhook delivery not yet delivered nor given up), also after the guard ended.
    public var hasWork: Bool { state == .running || moves.contains { $0.delivery?.nextAttempt != nil } }

    /// The rule's shares at the current stage.
    public var shares: [Int: Int] { share == 10_000 ? [target: 10_000] : [control: 10_000 - share, target: share] }
}

/// How a guarded rollout moves: the body of `PUT /v1/admin/models/{name}/rollout/guards/{rule}`
/// without the target (``RolloutGuardStart``), and kept in the guard.
public struct RolloutGuardSettings: Sendable, Hashable, Codable {
    /// The target's share at each stage in basis points: rising, the last 10,000.
    public var stages: [Int]
    /// The least time a stage lasts, in seconds.
    public var stageSeconds: Int
    /// The installations that must report the target version during a stage before it advances,
    /// and since the guard started before a regression rolls it back (with fewer, it pauses).
    public var minimumInstallations: Int
    /// The client networks (``ClientNetwork``: IPv4 /24s, IPv6 /64s) those installations must
    /// come from. From 2 up, each version's largest network is also left out of what the guard
    /// reads, so that no single network decides; 1 trusts one network (a test fleet behind one
    /// proxy).
    public var minimumNetworks: Int
    public var onRegression: RolloutGuard.Action
    public var onSampleRatioMismatch: RolloutGuard.Action
    /// Where every move is posted (signed with the guard's webhook secret); `nil` for none.
    public var webhook: URL?

    /// 1, 5, 25, 50 and 100 %.
    public static let defaultStages = [100, 500, 2_500, 5_000, 10_000]
    /// An hour.
    public static let defaultStageSeconds = 3_600
    public static let defaultMinimumInstallations = 100
    public static let defaultMinimumNetworks = 3

    /// Checks the settings.
    /// - Throws: ``DepotError`` (`bad_request`) naming the value and the rule it breaks.
    public init(
        stages: [Int] = defaultStages, stageSeconds: Int = defaultStageSeconds,
        minimumInstallations: Int = defaultMinimumInstallations, minimumNetworks: Int = defaultMinimumNetworks,
        onRegression: RolloutGuard.Action = .rollback, onSampleRatioMismatch: RolloutGuard.Action = .pause, webhook: URL? = nil
    ) throws(DepotError) {
        guard (1...20).contains(stages.count) else {
            throw DepotError(.badRequest, "A guarded rollout has 1 to 20 stages, not \(stages.count); for example 1,5,25,50,100.")
        }
        for (index, share) in stages.enumerated() {
            guard (1...10_000).contains(share), index == 0 || share > stages[index - 1] else {
                throw DepotError(
                    .badRequest,
                    "Stage \(index + 1) (\(Self.percent(share))) is not above the stage before and at most 100 %; give rising percentages ending at 100."
                )
            }
        }
        guard stages.last == 10_000 else {
            throw DepotError(
                .badRequest,
                "The last stage is \(Self.percent(stages.last ?? 0)), not 100 %; a guarded rollout ends with every device of the rule on the new version."
            )
        }
        guard (60...30 * 86_400).contains(stageSeconds) else {
            throw DepotError(.badRequest, "A stage's minimum duration of \(stageSeconds) seconds is outside 1 minute to 30 days.")
        }
        guard (0...10_000_000).contains(minimumInstallations) else {
            throw DepotError(.badRequest, "Minimum installations \(minimumInstallations) is outside 0 to 10,000,000.")
        }
        guard (1...10_000).contains(minimumNetworks) else {
            throw DepotError(
                .badRequest,
                "Minimum networks \(minimumNetworks) is outside 1 to 10,000; use 1 only for a test fleet behind one proxy.")
        }
        if let webhook {
            guard let scheme = webhook.scheme?.lowercased(), scheme == "https" || scheme == "http", webhook.host?.isEmpty == false else {
                throw DepotError(.badRequest, "Webhook '\(webhook.absoluteString.prefix(200))' is not an http or https URL with a host.")
            }
        }
        self.init(checked: stages, stageSeconds, minimumInstallations, minimumNetworks, onRegression, onSampleRatioMismatch, webhook)
    }

    private init(
        checked stages: [Int], _ stageSeconds: Int, _ minimumInstallations: Int, _ minimumNetworks: Int,
        _ onRegression: RolloutGuard.Action, _ onSampleRatioMismatch: RolloutGuard.Action, _ webhook: URL?
    ) {
        self.stages = stages
        self.stageSeconds = stageSeconds
        self.minimumInstallations = minimumInstallations
        self.minimumNetworks = minimumNetworks
        self.onRegression = onRegression
        self.onSampleRatioMismatch = onSampleRatioMismatch
        self.webhook = webhook
    }

    /// The defaults: stages of 1, 5, 25, 50 and 100 % lasting an hour each and 100 installations,
    /// rolled back on a regression, paused on a sample-ratio mismatch, no webhook.
    public static let standard = RolloutGuardSettings(
        checked: defaultStages, defaultStageSeconds, defaultMinimumInstallations, defaultMinimumNetworks,
        .rollback, .pause, nil)

    private enum CodingKeys: String, CodingKey {
        case stages, stageSeconds, minimumInstallations, minimumNetworks, onRegression, onSampleRatioMismatch, webhook
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            stages: try container.decodeIfPresent([Int].self, forKey: .stages) ?? Self.defaultStages,
            stageSeconds: try container.decodeIfPresent(Int.self, forKey: .stageSeconds) ?? Self.defaultStageSeconds,
            minimumInstallations: try container.decodeIfPresent(Int.self, forKey: .minimumInstallations)
                ?? Self.defaultMinimumInstallations,
            minimumNetworks: try container.decodeIfPresent(Int.self, forKey: .minimumNetworks) ?? Self.defaultMinimumNetworks,
            onRegression: try container.decodeIfPresent(RolloutGuard.Action.self, forKey: .onRegression) ?? .rollback,
            onSampleRatioMismatch: try container.decodeIfPresent(RolloutGuard.Action.self, forKey: .onSampleRatioMismatch) ?? .pause,
            webhook: try container.decodeIfPresent(URL.self, forKey: .webhook))
    }

    /// Seconds for people: `1 h`, `30 min`, `2 d`, `90 s`.
    public static func duration(_ seconds: Int) -> String {
        if seconds % 86_400 == 0 { return "\(seconds / 86_400) d" }
        if seconds % 3_600 == 0 { return "\(seconds / 3_600) h" }
        if seconds % 60 == 0 { return "\(seconds / 60) min" }
        return "\(seconds) s"
    }

    /// Basis points as a percentage: `5 %`, `0.5 %`.
    public static func percent(_ basisPoints: Int) -> String {
        if basisPoints % 100 == 0 { return "\(basisPoints / 100) %" }
        return String(format: basisPoints % 10 == 0 ? "%.1f %%" : "%.2f %%", Double(basisPoints) / 100)
    }
}

/// The body of `PUT /v1/admin/models/{name}/rollout/guards/{rule}`: starts guarding the rule
/// (which gives every device one version, the control) with `to` at the first stage.
public struct RolloutGuardStart: Sendable, Hashable, Codable {
    /// The version to roll out.
    public var to: Int
    public var settings: RolloutGuardSettings
    /// The HMAC-SHA256 key of the webhook's signatures: 16 to 256 bytes, required with a webhook.
    /// Never shown again.
    public var webhookSecret: String?

    public init(to: Int, settings: RolloutGuardSettings = .standard, webhookSecret: String? = nil) {
        self.to = to
        self.settings = settings
        self.webhookSecret = webhookSecret
    }

    private enum CodingKeys: String, CodingKey { case to, settings, webhookSecret }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        to = try container.decode(Int.self, forKey: .to)
        settings = try container.decodeIfPresent(RolloutGuardSettings.self, forKey: .settings) ?? .standard
        webhookSecret = try container.decodeIfPresent(String.self, forKey: .webhookSecret)
    }
}

/// The body of `GET /v1/admin/models/{name}/rollout/guards`.
public struct RolloutGuards: Sendable, Hashable, Codable {
    /// One guard per rule that was ever guarded, oldest first.
    public var guards: [RolloutGuard]

    public init(guards: [RolloutGuard]) { self.guards = guards }
}
