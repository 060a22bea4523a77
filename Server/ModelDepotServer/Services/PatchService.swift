import Foundation
import Logging
import ModelDepotShared
import NIOCore
import ServiceLifecycle

/// Makes the patches the published versions lack (``PatchPlan``), one at a time, on a thread
/// of its own at a low priority, and on one replica at a time. A patch worth offering (at most
/// ``largestOffered`` of the file it makes) is stored as a blob and recorded for the manifest;
/// one that is not is recorded without a blob, so it is not made again.
public struct PatchService: Sendable {
    /// The largest patch offered, as a share of the file it makes: a larger one saves too little
    /// to be worth a second way of updating.
    public static let largestOffered = 0.8

    let catalog: any ModelCatalog
    let blobs: any BlobStore
    let lock: any ReplicaWorkLock
    let collectionLock: any BlobCollectionLock
    let caches: CatalogCaches
    /// Patches to each published version from this many published versions before it (0: none).
    let sources: Int
    /// The largest file (old or new) that gets patches.
    let maximumSize: Int
    let logger: Logger
    private let wakeUp: AsyncStream<Void>.Continuation
    /// A wake-up after each version published here (``nudge()``).
    let wakeUps: AsyncStream<Void>

    init(catalog: any ModelCatalog, blobs: any BlobStore, lock: any ReplicaWorkLock, collectionLock: any BlobCollectionLock,
         caches: CatalogCaches, sources: Int, maximumSize: Int, logger: Logger) {
        self.catalog = catalog
        self.blobs = blobs
        self.lock = lock
        self.collectionLock = collectionLock
        self.caches = caches
        self.sources = sources
        self.maximumSize = maximumSize
        self.logger = logger
        (wakeUps, wakeUp) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Asks the worker to look for patches to make now.
    func nudge() {
        wakeUp.yield()
    }

    /// Makes every patch the plan lists. A patch that cannot be made is logged and left for the
    /// next look.
    /// - Parameter wait: Waits for another worker (this server's or a replica's) to finish first;
    ///   without it, returns at once when one is at work.
    /// - Returns: The patches recorded, offered or not.
    @discardableResult
    func makeMissing(wait: Bool = false) async throws -> [StoredPatch] {
        guard sources > 0 else { return [] }
        return try await lock.exclusively(wait: wait) {
            let plan = PatchPlan(files: try await catalog.publishedFiles(), made: try await catalog.patches(), sources: sources,
                                 maximumSize: maximumSize)
            var made: [StoredPatch] = []
            for job in plan.jobs {
                do {
                    if let patch = try await make(job) { made.append(patch) }
                } catch {
                    logger.error("could not make a patch; trying again later", metadata: [
                        "model": "\(job.model)", "version": "\(job.version)", "from": "\(job.fromVersion)", "file": "\(job.file)",
                        "error": "\(error)"])
                }
            }
            return made
        } ?? []
    }

    /// Makes one patch and records it; `nil` when a version went meanwhile.
    private func make(_ job: PatchPlan.Job) async throws -> StoredPatch? {
        let directory = FileManager.default.temporaryDirectory
        let bytes = try await blobs.withLocalFile(of: job.fromSha256, size: job.fromSize, in: directory) { old in
            try await blobs.withLocalFile(of: job.sha256, size: job.size, in: directory) { new in
                try await DedicatedThread.run(background: true) { () throws(DepotError) in try PatchMaker.patch(fromFileAt: old, toFileAt: new) }
            }
        }
        var patch = StoredPatch(model: job.model, version: job.version, fromVersion: job.fromVersion, file: job.file, fromSha256: job.fromSha256,
                                sha256: nil, size: bytes.count)
        guard Double(bytes.count) <= Self.largestOffered * Double(job.size) else {
            return try await catalog.addPatch(patch) ? patch : nil
        }
        let upload = try blobs.beginUpload()
        let digest: String
        do {
            for start in stride(from: 0, to: bytes.count, by: 4 << 20) {
                try await upload.write(ByteBuffer(bytes: bytes[start..<min(bytes.count, start + (4 << 20))]))
            }
            digest = try await upload.finish()
        } catch {
            await upload.discard()
            throw error
        }
        patch.sha256 = digest
        let (catalog, recording) = (catalog, patch)
        // A patch committed but not recorded (its version went) is left to the next collection.
        let recorded = try await collectionLock.naming {
            try await upload.commit(sha256: digest)
            return try await catalog.addPatch(recording)
        }
        guard recorded else { return nil }
        await caches.changed(.model, job.model.rawValue)
        return patch
    }
}

/// Looks for patches to make at start, after each version published on this server, and every
/// interval (so a replica finishes what another left).
struct PatchWorker: Service {
    let patches: PatchService
    let interval: Duration

    func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask {
                try? await cancelWhenGracefulShutdown {
                    while !Task.isCancelled {
                        try await Task.sleep(for: interval)
                        patches.nudge()
                    }
                }
            }
            patches.nudge()
            await cancelWhenGracefulShutdown {
                for await _ in patches.wakeUps {
                    do {
                        try await patches.makeMissing()
                    } catch {
                        patches.logger.error("could not look for patches to make; trying again later", metadata: ["error": "\(error)"])
                    }
                }
            }
            group.cancelAll()
        }
    }
}
