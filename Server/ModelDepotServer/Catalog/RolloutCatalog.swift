import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// Each model's rollout, its guarded rollouts and the history of its changes. One role of
/// ``ModelCatalog``; every method throws ``DepotError``. Changes are written once, below, over
/// ``ModelTransactions``.
public protocol RolloutCatalog: ModelTransactions {
    /// The model's rollout (empty until one is set).
    func rollout(of model: ModelName) async throws -> Rollout
    /// The model's guarded rollouts, one per rule ever guarded, oldest first.
    func rolloutGuards(of model: ModelName) async throws -> [StoredRolloutGuard]
    /// The models whose guarded rollouts have work: a running guard, or a webhook delivery due
    /// (``RolloutGuard/hasWork``).
    func modelsWithGuardWork() async throws -> [ModelName]
    /// The model's rollout changes, oldest first.
    func rolloutHistory(of model: ModelName) async throws -> [RolloutChange]
}

extension RolloutCatalog {
    /// Applies `change` to the rollout and the guarded rollouts together in one transaction
    /// (`change` is also given the model's published versions): every version the rollout names,
    /// and every one of `naming` (a change's versions, also those at 0%), must exist and be
    /// published; no rule may become unreachable unless `allowsShadowed` (``CatalogRule``). A
    /// changed rollout goes to the audit log with the key that changed it.
    public func changeRolloutAndGuards(
        of name: ModelName, by keyID: String, at date: Date, naming: [Int] = [], allowsShadowed: Bool = true,
        _ change: @escaping @Sendable (Rollout, [StoredRolloutGuard], _ published: Set<Int>) throws -> (Rollout, [StoredRolloutGuard])
    ) async throws -> (rollout: Rollout, guards: [StoredRolloutGuard]) {
        try await write(model: name) { model in
            let (after, guards) = try change(model.rollout, model.guards, model.published)
            try CatalogRule.checkChange(
                of: name, before: model.rollout, after: after, naming: naming, published: model.published, allowsShadowed: allowsShadowed)
            model.save(rollout: after, guards: guards, by: keyID, at: date)
            return (after, guards)
        }.value
    }

    /// Applies `change` to the rollout alone (see ``changeRolloutAndGuards(of:by:at:naming:allowsShadowed:_:)``).
    public func changeRollout(
        of model: ModelName, by keyID: String, at date: Date,
        _ change: @escaping @Sendable (Rollout) throws -> Rollout
    ) async throws -> Rollout {
        try await changeRolloutAndGuards(of: model, by: keyID, at: date) { rollout, guards, _ in (try change(rollout), guards) }.rollout
    }
}
