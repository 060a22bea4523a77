import Foundation
import Logging
import ModelDepotShared

/// Removes blobs no version references and what abandoned uploads left in the store. Candidates
/// are found without the lock (listing a large store takes a while); the removal itself holds
/// the ``BlobCollectionLock`` exclusively and reads the references again, so a blob an upload
/// is naming, or a version committed meanwhile references, is never removed.
struct BlobCollector: Sendable {
    let catalog: any ModelCatalog
    let blobs: any BlobStore
    let lock: any BlobCollectionLock
    let index: BlobIndex
    /// An upload unfinished for this long is abandoned (a slow 2 GB upload takes far less).
    var abandonedAfter: TimeInterval = 24 * 3600
    let clock: @Sendable () -> Date

    /// Collects once.
    /// - Parameters:
    ///   - dryRun: Only report what would be removed.
    ///   - wait: Wait for the lock (`false`: report ``BlobCollection/busy`` when an upload or
    ///     another replica holds it).
    func collect(dryRun: Bool = false, wait: Bool = false) async throws -> BlobCollection {
        let first = Set(try await catalog.blobReferences().map(\.sha256))
        let candidates = try await blobs.storedDigests().filter { !first.contains($0) }
        let abandoned = dryRun ? 0 : try await blobs.removeAbandonedUploads(startedBefore: clock().addingTimeInterval(-abandonedAfter))
        guard !candidates.isEmpty else { return BlobCollection(removedBlobs: [], removedUploads: abandoned, dryRun: dryRun, busy: false) }
        let outcome = try await remove(candidates, dryRun: dryRun, wait: wait)
        if outcome?.removed.isEmpty == false && !dryRun { try await index.reload() }
        if let failure = outcome?.failures.first { throw failure.error }
        return BlobCollection(removedBlobs: outcome?.removed ?? [], removedUploads: abandoned, dryRun: dryRun, busy: outcome == nil)
    }

    /// Removes the blobs a deletion left unreferenced (after it was committed), only those still
    /// unreferenced. A blob that cannot be removed is logged and left to the next collection: the
    /// deletion itself stands. (The blob index is reloaded with the other caches, ``CatalogCaches``.)
    func removeUnreferenced(_ digests: Set<String>, logger: Logger) async {
        guard !digests.isEmpty else { return }
        do {
            for failure in try await remove(digests.sorted(), dryRun: false, wait: true)?.failures ?? [] {
                logger.error(
                    "could not remove a blob no version references; the next collection removes it",
                    metadata: ["sha256": "\(failure.digest)", "cause": "\(failure.error)"])
            }
        } catch {
            logger.error("could not remove the blobs a deletion left; the next collection removes them", metadata: ["cause": "\(error)"])
        }
    }

    /// The one place blobs are removed: holding the lock exclusively, reads the references again
    /// and removes the candidates none names (each attempted, whatever became of the others).
    /// - Returns: The digests removed (or, for a dry run, that would be) and those that could not
    ///   be; `nil` when `wait` is false and the lock is taken.
    private func remove(_ candidates: [String], dryRun: Bool, wait: Bool) async throws
        -> (removed: [String], failures: [(digest: String, error: DepotError)])?
    {
        let (catalog, blobs) = (catalog, blobs)
        return try await lock.collecting(wait: wait) { () -> (removed: [String], failures: [(digest: String, error: DepotError)]) in
            let referenced = Set(try await catalog.blobReferences().map(\.sha256))
            var outcome: (removed: [String], failures: [(digest: String, error: DepotError)]) = ([], [])
            for digest in candidates.sorted() where !referenced.contains(digest) {
                do throws(DepotError) {
                    if !dryRun { try await blobs.remove(digest) }
                    outcome.removed.append(digest)
                } catch {
                    outcome.failures.append((digest, error))
                }
            }
            return outcome
        }
    }
}

extension BlobCollector {
    /// Collects, and logs what went when anything did (the server's periodic collection, after
    /// the one `buildApplication` makes before serving).
    func collectLogging(to logger: Logger) async throws {
        let result = try await collect()
        if !result.removedBlobs.isEmpty || result.removedUploads > 0 {
            logger.info(
                "removed blobs no version references and abandoned uploads",
                metadata: ["blobs": "\(result.removedBlobs.count)", "uploads": "\(result.removedUploads)"])
        }
    }
}
