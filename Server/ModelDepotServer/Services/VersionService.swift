import Foundation
import Logging
import ModelDepotShared

/// Stores, publishes and deletes versions, for the API and the console alike.
struct VersionService {
    let catalog: any ModelCatalog
    let collector: BlobCollector
    let caches: CatalogCaches
    /// Told of each version published, to make its patches.
    let patches: PatchService
    let clock: @Sendable () -> Date

    /// Stores verified uploads as the model's next version. The blobs are committed before the
    /// version is written, so a version never names a missing blob; between the two the
    /// collection lock is held, so the collector cannot remove them. A failure between them
    /// leaves blobs the next collection removes.
    /// - Parameter blobs: Each finished upload with its digest, the model's first.
    func add(
        _ verified: VerifiedUpload, blobs: [(upload: any BlobUpload, sha256: String)], to name: ModelName,
        publish: Bool
    ) async throws -> ModelVersion {
        let (catalog, clock) = (catalog, clock)
        let version = try await collector.lock.naming {
            for blob in blobs { try await blob.upload.commit(sha256: blob.sha256) }
            return try await catalog.addVersion(verified, to: name, publish: publish, at: clock())
        }
        await caches.changed(.model, name.rawValue)
        if publish { patches.nudge() }
        return version
    }

    /// Publishes or unpublishes a version (a `conflict` while the rollout hands it out).
    func setPublished(_ published: Bool, version number: Int, of name: ModelName) async throws -> ModelVersion {
        let version = try await catalog.setPublished(published, version: number, of: name, at: clock())
        await caches.changed(.model, name.rawValue)
        if published { patches.nudge() }
        return version
    }

    /// Deletes a version, then the blobs nothing references any more.
    func delete(_ number: Int, of name: ModelName, logger: Logger) async throws {
        let unreferenced = try await catalog.deleteVersion(number, of: name)
        await collector.removeUnreferenced(unreferenced, logger: logger)
        await caches.changed(.model, name.rawValue)
    }
}
