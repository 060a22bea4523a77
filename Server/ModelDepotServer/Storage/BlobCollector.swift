import Foundation
import Logging
import ModelDepotShared
import ServiceLifecycle

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
        let (catalog, blobs) = (catalog, blobs)
        let removed = try await lock.collecting(wait: wait) { () -> [String] in
            let referenced = Set(try await catalog.blobReferences().map(\.sha256))
            let unreferenced = candidates.filter { !referenced.contains($0) }.sorted()
            if !dryRun { for digest in unreferenced { try await blobs.remove(digest) } }
            return unreferenced
        }
        if removed?.isEmpty == false && !dryRun { try await index.reload() }
        return BlobCollection(removedBlobs: removed ?? [], removedUploads: abandoned, dryRun: dryRun, busy: removed == nil)
    }
}

extension BlobCollector {
    /// Removes the blobs a deletion left unreferenced (after it was committed), under the lock
    /// and only those still unreferenced. A blob that cannot be removed is logged and left to
    /// the next collection: the deletion itself stands. (The blob index is reloaded with the
    /// other caches, ``CatalogCaches``.)
    func removeUnreferenced(_ digests: Set<String>, logger: Logger) async {
        guard !digests.isEmpty else { return }
        let (catalog, blobs) = (catalog, blobs)
        do {
            _ = try await lock.collecting(wait: true) { () -> Bool in
                let referenced = Set(try await catalog.blobReferences().map(\.sha256))
                for digest in digests.sorted() where !referenced.contains(digest) {
                    do {
                        try await blobs.remove(digest)
                    } catch {
                        logger.error("could not remove a blob no version references; the next collection removes it",
                                     metadata: ["sha256": "\(digest)", "cause": "\(error)"])
                    }
                }
                return true
            }
        } catch {
            logger.error("could not remove the blobs a deletion left; the next collection removes them", metadata: ["cause": "\(error)"])
        }
    }
}

/// Collects every `interval`, after the collection `buildApplication` makes before serving.
struct BlobCollectionService: Service {
    let collector: BlobCollector
    let interval: Duration
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            guard !Task.isShuttingDownGracefully, !Task.isCancelled else { return }
            do {
                let result = try await collector.collect()
                if !result.removedBlobs.isEmpty || result.removedUploads > 0 {
                    logger.info("removed blobs no version references and abandoned uploads",
                                metadata: ["blobs": "\(result.removedBlobs.count)", "uploads": "\(result.removedUploads)"])
                }
            } catch {
                logger.error("could not collect unreferenced blobs; trying again later", metadata: ["cause": "\(error)"])
            }
        }
    }
}
