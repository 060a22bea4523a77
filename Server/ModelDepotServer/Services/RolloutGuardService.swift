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

    /// Reviews the model's running guards now (waiting for another reviewer to finish first),
    /// then posts what is due.
    func review(_ model: ModelName) async throws -> [RolloutGuard] {
        _ = try await lock.exclusively(wait: true) { try await reviewUnlocked(model) }
        await deliverDue(of: model)
        return try await guards(of: model)
    }

    /// Reviews every model's running guards, unless another replica is reviewing; then, outside
    /// the lock, posts every delivery due, those of guards that ended too.
    func reviewAll() async throws {
        let models = try await catalog.modelsWithGuardWork()
        _ = try await lock.exclusively(wait: false) {
            for model in models {
                do {
                    try await reviewUnlocked(model)
                } catch {
                    logger.error("could not review the guarded rollouts of a model", metadata: ["model": "\(model)", "error": "\(error)"])
                }
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for model in models { group.addTask { await deliverDue(of: model) } }
        }
    }

    private func reviewUnlocked(_ model: ModelName) async throws {
        let running = try await guards(of: model).filter { $0.state == .running }
        guard !running.isEmpty else { return }
        let guardrails = try await experiments.metrics(of: model).filter(\.guardrail)
        for reviewed in running {
            let rows = try await catalog.countedOutcomes(
                of: model, arm: .rule(id: reviewed.rule), versions: [reviewed.control, reviewed.target],
                fromHour: RolloutGuardReview.hour(reviewed.started))
            let review = RolloutGuardReview(of: reviewed, guardrails: guardrails, rows: rows, now: clock())
            _ = try await change(model, by: RolloutGuardMoves.actor) { rollout, guards in
                try RolloutGuardMoves.apply(review, to: reviewed, rollout: rollout, guards: guards)
            }
        }
    }

    /// Posts every move of the model whose delivery is due, all at once and each within the
    /// webhook's deadline, and records how each went. A delivery is first claimed in a
    /// transaction (its next attempt moved a lease ahead), so that no other replica posts it
    /// meanwhile, and one claimed by a replica that stopped is due again after the lease.
    private func deliverDue(of model: ModelName) async {
        let now = clock()
        let claims = Locked<[GuardDelivery]>([])
        let lease = now.addingTimeInterval(GuardDelivery.lease)
        do {
            _ = try await catalog.changeRolloutAndGuards(of: model, by: RolloutGuardMoves.actor, at: now) { rollout, guards, _ in
                let (claimed, leased) = GuardDelivery.claim(due: guards, model: model, at: now, until: lease)
                claims.withLock { $0 = claimed }
                return (rollout, leased)
            }
        } catch {
            return logger.error("could not claim the guards' webhook deliveries", metadata: ["model": "\(model)", "error": "\(error)"])
        }
        let claimed = claims.withLock { $0 }
        guard !claimed.isEmpty else { return }
        let outcomes = await withTaskGroup(of: (String, String?).self) { group in
            for delivery in claimed {
                group.addTask {
                    (delivery.payload.delivery, await webhook.send(delivery.payload, to: delivery.url, secret: delivery.secret, at: now))
                }
            }
            return await group.reduce(into: [String: String?]()) { $0[$1.0] = $1.1 }
        }
        for (id, failure) in outcomes {
            if let failure {
                logger.warning(
                    "a guard's webhook delivery failed", metadata: ["model": "\(model)", "delivery": "\(id)", "error": "\(failure)"])
            }
        }
        let recorded = clock()
        do {
            _ = try await catalog.changeRolloutAndGuards(of: model, by: RolloutGuardMoves.actor, at: recorded) { rollout, guards, _ in
                (
                    rollout,
                    guards.map { stored in outcomes.reduce(stored) { $0.recordingDelivery($1.key, failure: $1.value, at: recorded) } }
                )
            }
        } catch {
            logger.error("could not record the guards' webhook deliveries", metadata: ["model": "\(model)", "error": "\(error)"])
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
