import Foundation
import ModelDepotShared

/// The body of `PUT /v1/admin/models/{name}/rollout/rules/{rule}`: creates the rule (last in
/// order, with a new id and salt) or changes it (keeping its salt and the ranges of versions
/// whose share stays).
public struct RolloutRuleChange: Sendable, Hashable, Codable {
    /// One version's share.
    public struct Share: Sendable, Hashable, Codable {
        /// The version.
        public var version: Int
        /// Its share in basis points: 100 = 1%.
        public var basisPoints: Int

        /// Creates a share.
        public init(version: Int, basisPoints: Int) {
            self.version = version
            self.basisPoints = basisPoints
        }
    }

    /// Conditions as text (`platform=ios`, `appVersion>=3.2.0`); all must hold.
    public var conditions: [String]
    /// The split; shares add up to 10,000.
    public var shares: [Share]
    /// Whether to keep the rule even when an earlier rule takes every device it would match
    /// (`allowShadowed`; absent means `false`, and such a rule is refused with `409 conflict`).
    public var allowShadowed: Bool?

    /// Creates a change.
    public init(conditions: [String], shares: [Share]) {
        self.conditions = conditions
        self.shares = shares
    }
}

/// The body of `PUT /v1/admin/models/{name}/rollout/default` and `…/rollout/pins/{id}`.
public struct RolloutVersionChoice: Sendable, Hashable, Codable {
    /// The version; `null` (for the default) means "the newest published version".
    public var version: Int?

    /// Creates a choice.
    public init(version: Int?) { self.version = version }
}

/// One entry of a model's rollout audit log: who changed it, when, before and after.
public struct RolloutChange: Sendable, Hashable, Codable {
    /// The id of the key that made the change.
    public var keyID: String
    /// When.
    public var at: Date
    /// The rollout before the change.
    public var before: Rollout
    /// The rollout after the change.
    public var after: Rollout
    /// Why, for a change a guarded rollout made (its move's reason, with the evidence).
    public var reason: String?

    /// Creates an entry.
    public init(keyID: String, at: Date, before: Rollout, after: Rollout, reason: String? = nil) {
        self.keyID = keyID
        self.at = at
        self.before = before
        self.after = after
        self.reason = reason
    }
}

/// The body of `GET /v1/admin/models/{name}/rollout/history`.
public struct RolloutHistory: Sendable, Hashable, Codable {
    /// Changes, oldest first.
    public var changes: [RolloutChange]

    /// Creates a history.
    public init(changes: [RolloutChange]) { self.changes = changes }
}
