import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// Changes rollouts, for the API and the console alike.
struct RolloutService {
    let catalog: any ModelCatalog
    let caches: CatalogCaches
    let clock: @Sendable () -> Date

    /// Changes a model's rollout in one transaction (`body` edits it; a rejected change leaves it
    /// as it was), then drops its cached answers.
    /// - Parameters:
    ///   - naming: The versions the change names, also those it gives 0%.
    ///   - allowsShadowed: Whether the change may leave a rule that no device can reach.
    /// - Throws: ``DepotError``: `conflict` for a change to the split of a rule a guarded rollout
    ///   owns; see ``checked(_:before:naming:published:allowsShadowed:_:)``; what `body` throws.
    func change(
        _ name: ModelName, by keyID: String, naming: [Int] = [], allowsShadowed: Bool = false,
        _ body: @escaping @Sendable (Rollout) throws -> Rollout
    ) async throws -> Rollout {
        let rollout = try await catalog.changeRolloutAndGuards(
            of: name, by: keyID, at: clock(), naming: naming, allowsShadowed: allowsShadowed
        ) { before, guards, _ in
            let after = try body(before)
            try RolloutGuardMoves.checkUnguarded(before: before, after: after, guards: guards)
            return (after, guards)
        }.rollout
        await caches.changed(.model, name.rawValue)
        return rollout
    }

    /// `body` applied to `before`, checked as ``change(_:by:naming:allowsShadowed:_:)`` would save
    /// it, for the console's preview.
    /// - Throws: ``DepotError``: `bad_request` for a version that is not published, `conflict`
    ///   for a rule the change leaves unreachable.
    static func checked(
        _ name: ModelName, before: Rollout, naming: [Int], published: Set<Int>, allowsShadowed: Bool,
        _ body: (Rollout) throws -> Rollout
    ) throws -> Rollout {
        let after = try body(before)
        try CatalogRule.checkChange(
            of: name, before: before, after: after, naming: naming, published: published, allowsShadowed: allowsShadowed)
        return after
    }
}
