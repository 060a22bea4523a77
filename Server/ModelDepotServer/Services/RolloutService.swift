import Foundation
import ModelDepotShared

/// Changes rollouts, for the API and the console alike.
struct RolloutService {
    let catalog: any ModelCatalog
    let caches: CatalogCaches
    let clock: @Sendable () -> Date

    /// Changes a model's rollout in one transaction (`body` checks and edits it; a rejected
    /// change leaves it as it was), then drops its cached answers.
    /// - Throws: ``DepotError`` (`conflict`) for a change to the split of a rule a guarded rollout
    ///   owns, besides what `body` throws.
    func change(_ name: ModelName, by keyID: String, _ body: @escaping @Sendable (Rollout) throws -> Rollout) async throws -> Rollout {
        let rollout = try await catalog.changeRolloutAndGuards(of: name, by: keyID, at: clock()) { before, guards in
            let after = try body(before)
            try RolloutGuardMoves.checkUnguarded(before: before, after: after, guards: guards)
            return (after, guards)
        }.rollout
        await caches.changed(.model, name.rawValue)
        return rollout
    }
}
