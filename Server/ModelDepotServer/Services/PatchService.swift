import Crypto
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
    let metrics: ServerMetrics
    let logger: Logger
    let clock: @Sendable () -> Date
    /// The jobs that failed, tried again later and later.
    let failures = PatchFailures()
    private let wakeUp: AsyncStream<Void>.Continuation
    /// A wake-up after each version published here (``nudge()``).
    let wakeUps: AsyncStream<Void>

    init(
        catalog: any ModelCatalog, blobs: any BlobStore, lock: any ReplicaWorkLock, collectionLock: any BlobCollectionLock,
        caches: CatalogCaches, sources: Int, maximumSize: Int, metrics: ServerMetrics, logger: Logger,
        clock: @escaping @Sendable () -> Date
    ) {
        self.catalog = catalog
        self.blobs = blobs
        self.lock = lock
        self.collectionLock = collectionLock
        self.caches = caches
        self.sources = sources
        self.maximumSize = maximumSize
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
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
            let plan = PatchPlan(
                files: try await catalog.publishedFiles(), made: try await catalog.patches(), sources: sources,
                maximumSize: maximumSize)
            var made: [StoredPatch] = []
            for job in plan.jobs where failures.isDue(job, at: clock()) {
                // A server shutting down stops between patches (one being made is finished).
                try Task.checkCancellation()
                do {
                    if let patch = try await make(job) { made.append(patch) }
                    failures.succeeded(job)
                } catch {
                    let retryAt = failures.failed(job, at: clock())
                    logger.error(
                        "could not make a patch; trying again later",
                        metadata: [
                            "model": "\(job.model)", "version": "\(job.version)", "from": "\(job.fromVersion)", "file": "\(job.file)",
                            "retry": "\(retryAt)", "error": "\(error)",
                        ])
                }
            }
            return made
        } ?? []
    }

    /// The most bytes a patch offered for a file of `size` bytes may have.
    public static func offerLimit(forFileOf size: Int) -> Int { Int((largestOffered * Double(size)).rounded(.down)) }

    /// Makes one patch (stopped once it cannot come under the offer limit), logs and counts it
    /// (``ServerMetrics/recordPatch(_:bytes:fileBytes:seconds:)``) and records it; `nil` when a
    /// version went meanwhile. A stopped patch is recorded, not offered, with the size it had
    /// reached (it could only have been larger).
    private func make(_ job: PatchPlan.Job) async throws -> StoredPatch? {
        let directory = FileManager.default.temporaryDirectory
        let start = ContinuousClock.now
        let limit = Self.offerLimit(forFileOf: job.size)
        let (made, makesTheFile) = try await blobs.withLocalFile(of: job.fromSha256, size: job.fromSize, in: directory) { old in
            try await blobs.withLocalFile(of: job.sha256, size: job.size, in: directory) { new in
                try await DedicatedThread.run(background: true) { () throws(DepotError) in
                    let made = try PatchMaker.patch(fromFileAt: old, toFileAt: new, limit: limit)
                    // A stopped patch is not broken: there is nothing to apply.
                    guard case .success(let patch) = made else { return (made, true) }
                    return (made, try Self.applies(patch, to: old, making: job, in: directory))
                }
            }
        }
        let size: Int
        var stopped: PatchMaker.OverLimit?
        switch made {
        case .success(let bytes): size = bytes.count
        case .failure(let overLimit): (size, stopped) = (overLimit.atLeast, overLimit)
        }
        var patch = StoredPatch(
            model: job.model, version: job.version, fromVersion: job.fromVersion, file: job.file, fromSha256: job.fromSha256,
            sha256: nil, size: size)
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let result: ServerMetrics.PatchResult = !makesTheFile ? .broken : size <= limit ? .offered : .tooLarge
        metrics.recordPatch(result, bytes: size, fileBytes: job.size, seconds: seconds)
        var metadata: Logger.Metadata = [
            "model": "\(job.model)", "version": "\(job.version)", "from": "\(job.fromVersion)", "file": "\(job.file)",
            "bytes": "\(size)", "share": "\(String(format: "%.4f", Double(size) / Double(max(job.size, 1))))",
            "seconds": "\(String(format: "%.3f", seconds))", "result": "\(result.rawValue)",
        ]
        if let stopped {
            metadata["stopped"] = "\(String(format: "%.4f", Double(stopped.newBytesDone) / Double(max(job.size, 1))))"
            logger.info("stopped making a patch over the offer limit", metadata: metadata)
        } else if makesTheFile {
            logger.info("made a patch", metadata: metadata)
        } else {
            logger.error("a patch made does not make its file; it is recorded as not offered", metadata: metadata)
        }
        guard result == .offered, case .success(let bytes) = made else {
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
            do {
                try await upload.commit(sha256: digest)
            } catch {
                await upload.discard()
                throw error
            }
            return try await catalog.addPatch(recording)
        }
        guard recorded else { return nil }
        await caches.changed(.model, job.model.rawValue)
        return patch
    }
}

extension PatchService {
    /// Whether `patch` applied to the file at `old` makes the job's file (its size and SHA-256),
    /// as a device will check: a patch that does not is never offered.
    static func applies(_ patch: [UInt8], to old: String, making job: PatchPlan.Job, in directory: URL) throws(DepotError) -> Bool {
        let output = directory.appendingPathComponent("patched-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        guard let handle = PrivateFile.create(at: output) else {
            throw DepotError(.internalError, "Could not create '\(output.path)' to check a patch.")
        }
        let mapped = try MappedFile(path: old)
        let applied = patch.withUnsafeBytes { patch in
            Result { () throws(DepotError) in
                try mapped.withBytes { (old) throws(DepotError) in
                    try Patch.apply(patch, to: old, newSize: job.size, output: handle, temporaryDirectory: directory)
                }
            }
        }
        try? handle.close()
        guard case .success = applied else { return false }
        return try SHA256.digest(ofFileAt: output.path).hex == job.sha256
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
                    } catch is CancellationError {
                        return
                    } catch {
                        patches.logger.error("could not look for patches to make; trying again later", metadata: ["error": "\(error)"])
                    }
                }
            }
            group.cancelAll()
        }
    }
}
