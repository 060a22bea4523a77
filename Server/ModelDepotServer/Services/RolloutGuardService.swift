import Foundation
import Logging
import ModelDepotRollouts
import ModelDepotShared

/// Guarded rollouts: starting, resuming and stopping them for people, and reviewing them — by
/// the server every ``ServerConfiguration/guardReviewInterval`` and on request — on one replica at
/// a time, then posting their moves to their webhooks.
struct RolloutGuardService {
    let catalog: any ModelCatalog
    let caches: CatalogCaches
    let experiments: ExperimentService
    let lock: any ReplicaWorkLock
    let webhook: GuardWebhook
    let clock: @Sendable () -> Date
    let logger: Logger

    func guards(of model: ModelName) async throws -> [RolloutGuard] {
        try await catalog.rolloutGuards(of: model).map(\.rolloutGuard)
    }

    /// Starts guarding a rule.
    /// - Throws: ``DepotError``: see ``RolloutGuardMoves/start(_:rule:by:at:rollout:guards:)``;
    ///   `not_found` or `conflict` for a target that is not a published version.
    func start(_ start: RolloutGuardStart, of model: ModelName, rule: String, by keyID: String) async throws -> RolloutGuard {
        let now = clock()
        _ = try await change(model, by: keyID) { rollout, guards in
            try RolloutGuardMoves.start(start, rule: rule, by: keyID, at: now, rollout: rollout, guards: guards)
        }
        return try await finished(model, rule)
    }

    func resume(of model: ModelName, rule: String, by keyID: String) async throws -> RolloutGuard {
        let now = clock()
        _ = try await change(model, by: keyID) { try RolloutGuardMoves.resume(rule: rule, by: keyID, at: now, rollout: $0, guards: $1) }
        return try await finished(model, rule)
    }

    func stop(of model: ModelName, rule: String, by keyID: String) async throws -> RolloutGuard {
        let now = clock()
        _ = try await change(model, by: keyID) { try RolloutGuardMoves.stop(rule: rule, by: keyID, at: now, rollout: $0, guards: $1) }
        return try await finished(model, rule)
    }

    /// Reviews the model's running guards now (waiting for another reviewer to finish first).
    func review(_ model: ModelName) async throws -> [RolloutGuard] {
        _ = try await lock.exclusively(wait: true) { try await reviewUnlocked(model) }
        return try await guards(of: model)
    }

    /// Reviews every model's running guards, unless another replica is reviewing.
    func reviewAll() async throws {
        _ = try await lock.exclusively(wait: false) {
            for model in try await catalog.modelsWithRunningGuards() {
                do {
                    try await reviewUnlocked(model)
                } catch {
                    logger.error("could not review the guarded rollouts of a model", metadata: ["model": "\(model)", "error": "\(error)"])
                }
            }
        }
    }

    private func reviewUnlocked(_ model: ModelName) async throws {
        let running = try await guards(of: model).filter { $0.state == .running }
        if !running.isEmpty {
            let guardrails = try await experiments.metrics(of: model).filter(\.guardrail)
            let outcomes = try await catalog.outcomes(of: model)
            for reviewed in running {
                let arm = CountedArm.rule(id: reviewed.rule)
                let rows = outcomes.compactMapValues { $0[arm] }
                let review = RolloutGuardReview(of: reviewed, guardrails: guardrails, rows: rows, now: clock())
                _ = try await change(model, by: RolloutGuardMoves.actor) { rollout, guards in
                    try RolloutGuardMoves.apply(review, to: reviewed, rollout: rollout, guards: guards)
                }
            }
        }
        await deliverDue(of: model)
    }

    /// Posts every move whose delivery is due, and records how each went.
    private func deliverDue(of model: ModelName) async {
        guard let stored = try? await catalog.rolloutGuards(of: model) else { return }
        let now = clock()
        for entry in stored {
            guard let url = entry.rolloutGuard.settings.webhook, let secret = entry.webhookSecret else { continue }
            for move in entry.rolloutGuard.moves {
                // A move's first attempt is due at once: its time went through the catalog's JSON
                // (milliseconds as a double), which can put it a hair after the clock's now.
                guard let delivery = move.delivery, let due = delivery.nextAttempt, delivery.attempts == 0 || due <= now else { continue }
                var sent = move
                sent.delivery = nil
                let payload = GuardWebhook.Payload(
                    delivery: delivery.id, model: model.rawValue, rule: entry.rolloutGuard.ruleName,
                    ruleId: entry.rolloutGuard.rule, control: entry.rolloutGuard.control,
                    target: entry.rolloutGuard.target, state: entry.rolloutGuard.state, move: sent)
                let failure = await webhook.send(payload, to: url, secret: secret, at: now)
                if let failure {
                    logger.warning(
                        "a guard's webhook delivery failed",
                        metadata: ["model": "\(model)", "delivery": "\(delivery.id)", "error": "\(failure)"])
                }
                _ = try? await catalog.changeRolloutAndGuards(of: model, by: RolloutGuardMoves.actor, at: now) { rollout, guards, _ in
                    (rollout, guards.map { $0.recordingDelivery(delivery.id, failure: failure, at: now) })
                }
            }
        }
    }

    private func change(
        _ model: ModelName, by keyID: String,
        _ body: @escaping @Sendable (Rollout, [StoredRolloutGuard]) throws -> (Rollout, [StoredRolloutGuard])
    )
        async throws -> [StoredRolloutGuard]
    {
        // Most reviews only record a look: the manifests are dropped (and signed again on the
        // device path) only when the rule's split moved. Another change made in between told the
        // caches itself.
        let before = try await catalog.rollout(of: model)
        let result = try await catalog.changeRolloutAndGuards(of: model, by: keyID, at: clock()) { rollout, guards, _ in
            try body(rollout, guards)
        }
        if result.rollout != before { await caches.changed(.model, model.rawValue) }
        return result.guards
    }

    private func finished(_ model: ModelName, _ rule: String) async throws -> RolloutGuard {
        await deliverDue(of: model)
        guard let found = try await guards(of: model).last(where: { $0.ruleName == rule }) else {
            throw DepotError(.notFound, "Rule '\(rule)' has no guarded rollout.")
        }
        return found
    }
}

extension StoredRolloutGuard {
    /// The guard with delivery `id` marked delivered, or failed once more (due again after the
    /// backoff, or given up after the last attempt).
    func recordingDelivery(_ id: String, failure: String?, at now: Date) -> StoredRolloutGuard {
        var copy = self
        for index in copy.rolloutGuard.moves.indices {
            guard var delivery = copy.rolloutGuard.moves[index].delivery, delivery.id == id else { continue }
            delivery.attempts += 1
            if let failure {
                delivery.lastError = failure
                delivery.nextAttempt =
                    delivery.attempts < GuardWebhook.maximumAttempts
                    ? now.addingTimeInterval(GuardWebhook.delay(afterAttempt: delivery.attempts)) : nil
            } else {
                delivery.delivered = now
                delivery.nextAttempt = nil
                delivery.lastError = nil
            }
            copy.rolloutGuard.moves[index].delivery = delivery
        }
        return copy
    }
}
