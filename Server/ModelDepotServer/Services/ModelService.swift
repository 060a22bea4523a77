import Foundation
import Logging
import ModelDepotShared

/// Creates and deletes models, for the API and the console alike.
struct ModelService {
    let catalog: any ModelCatalog
    let collector: BlobCollector
    let caches: CatalogCaches
    let clock: @Sendable () -> Date

    func create(_ creation: ModelCreation) async throws -> ModelSummary {
        try await catalog.createModel(creation, at: clock())
    }

    /// Deletes a model (with its versions when `force` is set), then the blobs nothing
    /// references any more, then its cached answers.
    func delete(_ name: ModelName, force: Bool, logger: Logger) async throws {
        let unreferenced = try await catalog.deleteModel(name, force: force)
        await collector.removeUnreferenced(unreferenced, logger: logger)
        await caches.changed(.model, name.rawValue)
    }
}
