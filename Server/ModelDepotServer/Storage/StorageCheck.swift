import Crypto
import Foundation
import ModelDepotShared

/// What `depot fsck` finds: every blob a version references, hashed again from disk, and the
/// files in the blob store that no version references.
public struct StorageReport: Sendable, Codable {
    /// One referenced blob and what is wrong with it, if anything.
    public struct Blob: Sendable, Codable {
        public var sha256: String
        public var size: Int
        public var models: [String]
        /// `nil` when the file is whole; otherwise what is wrong, in words.
        public var problem: String?
    }

    public var blobs: [Blob]
    /// Digests of files no version references (a crash's leftovers; the next start removes them).
    public var unreferenced: [String]

    /// The blobs with a problem.
    public var damaged: [Blob] { blobs.filter { $0.problem != nil } }
}

/// Checks a storage directory's blobs against its catalog, reading every byte (with the server
/// running or not: the catalog is only read).
public enum StorageCheck {
    /// - Throws: ``DepotError`` when `storage` holds no ModelDepot catalog or it cannot be read.
    public static func run(storage: String, progress: (String) -> Void = { _ in }) async throws -> StorageReport {
        guard FileManager.default.fileExists(atPath: storage + "/depot.sqlite") else {
            throw DepotError(
                .notFound, "'\(storage)' holds no ModelDepot storage (no depot.sqlite). Give the directory 'depot serve --storage' uses.")
        }
        let catalog = try SQLiteModelCatalog(path: storage + "/depot.sqlite")
        let blobs = try FileSystemBlobStore(root: storage, cleaningTemporaryFiles: false)
        let references = try await catalog.blobReferences().sorted { $0.sha256 < $1.sha256 }
        var checked: [StorageReport.Blob] = []
        for reference in references {
            progress(reference.sha256)
            checked.append(
                StorageReport.Blob(
                    sha256: reference.sha256, size: reference.size, models: reference.models.map(\.rawValue).sorted(),
                    problem: problem(of: reference, at: blobs.location(of: reference.sha256))))
        }
        let referenced = Set(references.map(\.sha256))
        return StorageReport(blobs: checked, unreferenced: blobs.storedDigestsNow().filter { !referenced.contains($0) }.sorted())
    }

    private static func problem(of reference: BlobReference, at path: String) -> String? {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue else {
            return "missing: \(path) does not exist"
        }
        guard size == reference.size else { return "wrong size: \(path) has \(size) bytes, \(reference.size) were stored" }
        do {
            let digest = try SHA256.digest(ofFileAt: path).hex
            return digest == reference.sha256 ? nil : "changed: \(path) hashes to \(digest)"
        } catch {
            return "unreadable: \(error.message)"
        }
    }
}
