import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// One webhook delivery a replica has claimed: what to post, where, signed with which secret.
struct GuardDelivery: Sendable {
    let payload: GuardWebhook.Payload
    let url: URL
    let secret: String

    /// How long a claim holds a delivery: past the webhook's deadline, so that only a replica
    /// that stopped mid-delivery leaves it to another.
    static let lease: TimeInterval = 60

    /// The deliveries of `guards` due at `now` (within a second: a move's time went through the
    /// catalog's JSON, which can put it a hair after the clock's now), and the guards with each
    /// of those leased until `lease`.
    static func claim(due guards: [StoredRolloutGuard], model: ModelName, at now: Date, until lease: Date) -> (
        [GuardDelivery], [StoredRolloutGuard]
    ) {
        var claimed: [GuardDelivery] = []
        let leased = guards.map { entry in
            guard let url = entry.rolloutGuard.settings.webhook, let secret = entry.webhookSecret else { return entry }
            var entry = entry
            for index in entry.rolloutGuard.moves.indices {
                let move = entry.rolloutGuard.moves[index]
                guard var delivery = move.delivery, let due = delivery.nextAttempt, due <= now.addingTimeInterval(1) else { continue }
                var sent = move
                sent.delivery = nil
                let rolloutGuard = entry.rolloutGuard
                claimed.append(
                    GuardDelivery(
                        payload: GuardWebhook.Payload(
                            delivery: delivery.id, model: model.rawValue, rule: rolloutGuard.ruleName, ruleId: rolloutGuard.rule,
                            control: rolloutGuard.control, target: rolloutGuard.target, state: rolloutGuard.state, move: sent),
                        url: url, secret: secret))
                delivery.nextAttempt = lease
                entry.rolloutGuard.moves[index].delivery = delivery
            }
            return entry
        }
        return (claimed, leased)
    }
}
