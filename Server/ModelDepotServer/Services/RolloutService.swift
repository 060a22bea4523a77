import Foundation
import ModelDepotShared

/// Changes rollouts, for the API and the console alike.
struct RolloutService {
    let catalog: any ModelCatalog
    let caches: CatalogCaches
    let clock: @Sendable () -> Date

    /// Changes a model's rollout in one transaction (`body` checks and edits it; a rejected
    /// change leaves it as it was), then drops its cached answers.
    func change(_ name: ModelName, by keyID: String, _ body: @escaping @Sendable (Rollout) throws -> Rollout) async throws -> Rollout {
        let rollout = try await catalog.changeRollout(of: name, by: keyID, at: clock(), body)
        await caches.changed(.model, name.rawValue)
        return rollout
    }
}
