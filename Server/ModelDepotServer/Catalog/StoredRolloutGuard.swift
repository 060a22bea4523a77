import ModelDepotRollouts
import ModelDepotShared

/// A guarded rollout as the catalog keeps it: what the API shows, and the webhook's secret,
/// which it never shows.
public struct StoredRolloutGuard: Sendable, Hashable, Codable {
    public var rolloutGuard: RolloutGuard
    public var webhookSecret: String?

    public init(_ rolloutGuard: RolloutGuard, webhookSecret: String?) {
        self.rolloutGuard = rolloutGuard
        self.webhookSecret = webhookSecret
    }

    /// The reason of the newest move `after` adds to `before`, for the rollout history entry of
    /// the change made with it.
    static func reasonOfNewMove(before: [StoredRolloutGuard], after: [StoredRolloutGuard]) -> String? {
        let known = Set(before.flatMap { $0.rolloutGuard.moves })
        return after.flatMap(\.rolloutGuard.moves).filter { !known.contains($0) }.max { $0.at < $1.at }?.reason
    }
}
