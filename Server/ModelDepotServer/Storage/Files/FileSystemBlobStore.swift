import Foundation
import ModelDepotShared

#if canImport(Glibc)
    import Glibc
    private let systemClose = Glibc.close
#elseif canImport(Darwin)
    import Darwin
    private let systemClose = Darwin.close
#endif

/// Blobs as files: `blobs/sha256/ab/<hex>`, written to `tmp/` first (see ``FileUpload``), then
/// fsync, rename, fsync of the directory — a crash leaves either no blob or a whole one.
public struct FileSystemBlobStore: BlobStore {
    let root: String
    /// Uploads are written with `O_DIRECT` where the file system allows it.
    let directIO: Bool

    var blobsDirectory: String { root + "/blobs/sha256" }
    var temporaryDirectory: String { root + "/tmp" }

    /// Opens the store under a storage directory, creating its folders and removing temporary
    /// files that a crash left behind.
    /// - Parameters:
    ///   - root: The storage directory.
    ///   - directIO: Write uploads with `O_DIRECT` where the file system allows it (ordinary
    ///     writes otherwise, or when `false`).
    ///   - cleaningTemporaryFiles: Remove what `tmp/` holds (`false` while a server may be using it).
    /// - Throws: ``DepotError`` when the folders cannot be created.
    public init(root: String, directIO: Bool = true, cleaningTemporaryFiles: Bool = true) throws(DepotError) {
        self.root = root
        self.directIO = directIO
        do {
            // Only the server's user may read the catalog, the blobs and the keys: the storage
            // directory is 0700 (also one made by an earlier version), its files 0600.
            let privateFolder: [FileAttributeKey: Any] = [.posixPermissions: 0o700]
            for folder in [root, root + "/blobs", root + "/blobs/sha256", root + "/tmp"] {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: privateFolder)
            }
            guard chmod(root, 0o700) == 0 else { throw Self.failure("restrict the permissions of", root) }
            for stray in try FileManager.default.contentsOfDirectory(atPath: root + "/tmp") where cleaningTemporaryFiles {
                try FileManager.default.removeItem(atPath: root + "/tmp/" + stray)
            }
        } catch {
            throw DepotError(
                .internalError, "Could not prepare the storage directory '\(root)'. Check that it is writable.",
                cause: error.localizedDescription)
        }
    }

    public func beginUpload() throws(DepotError) -> any BlobUpload {
        try FileUpload(path: temporaryDirectory + "/upload-" + UUID().uuidString, store: self)
    }

    public var delivery: BlobDelivery { .file }

    /// Moves a finished upload's file into place (or drops it when the blob is stored already),
    /// then makes the move durable.
    func place(_ upload: FileUpload, sha256: String) throws(DepotError) {
        let directory = blobsDirectory + "/" + sha256.prefix(2)
        let destination = directory + "/" + sha256
        if access(destination, F_OK) == 0 {
            unlink(upload.temporaryPath)
            return
        }
        guard mkdir(directory, 0o700) == 0 || errno == EEXIST else { throw Self.failure("create", directory) }
        guard rename(upload.temporaryPath, destination) == 0 else { throw Self.failure("move the upload to", destination) }
        try Self.synchronizeDirectory(directory)
    }

    public func filePath(of sha256: String) -> String? {
        location(of: sha256)
    }

    public func withLocalFile<Result: Sendable>(
        of sha256: String, size: Int, in directory: URL,
        _ body: (String) async throws -> Result
    ) async throws -> Result {
        let path = location(of: sha256)
        var status = stat()
        guard stat(path, &status) == 0, Int(status.st_size) == size else {
            throw DepotError(
                .internalError,
                "Blob \(sha256) is missing from '\(blobsDirectory)' or is not \(size) bytes long. Restore it from a backup ('depot fsck' lists damaged blobs)."
            )
        }
        return try await body(path)
    }

    /// Where a blob's file is, or would be.
    func location(of sha256: String) -> String {
        blobsDirectory + "/" + sha256.prefix(2) + "/" + sha256
    }

    public func remove(_ sha256: String) async throws(DepotError) {
        let path = location(of: sha256)
        guard unlink(path) == 0 || errno == ENOENT else { throw Self.failure("remove", path) }
    }

    public func storedDigests() async throws -> [String] {
        storedDigestsNow()
    }

    /// The storage directory takes writes.
    public func checkReachable() async throws {
        let probe = temporaryDirectory + "/.ready-\(UUID().uuidString)"
        guard FileManager.default.createFile(atPath: probe, contents: Data()) else {
            throw DepotError(
                .unavailable, "The storage directory does not take writes.",
                cause: "could not create \(probe): \(String(cString: strerror(errno)))")
        }
        try? FileManager.default.removeItem(atPath: probe)
    }

    /// Temporary files of uploads are removed at start; while the server runs, each upload
    /// removes its own, whatever becomes of it.
    public func removeAbandonedUploads(startedBefore date: Date) async throws -> Int { 0 }

    /// Every blob digest on disk (for start-up clean-up of blobs no version references).
    func storedDigestsNow() -> [String] {
        let prefixes = (try? FileManager.default.contentsOfDirectory(atPath: blobsDirectory)) ?? []
        return prefixes.flatMap { prefix in
            ((try? FileManager.default.contentsOfDirectory(atPath: blobsDirectory + "/" + prefix)) ?? [])
        }
    }

    /// What a request that needed space gets when the storage has none.
    static let storageFull = DepotError(
        .insufficientStorage,
        "The server's storage is full: nothing was stored. Ask the server's operator to free space in its storage directory (or give it a larger disk), then try again."
    )

    static func synchronizeDirectory(_ path: String) throws(DepotError) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw failure("open", path) }
        defer { _ = systemClose(descriptor) }
        guard fsync(descriptor) == 0 else { throw failure("flush", path) }
    }

    static func failure(_ operation: String, _ path: String) -> DepotError {
        if errno == ENOSPC || errno == EDQUOT { return storageFull }
        return DepotError(
            .internalError, "Could not \(operation) '\(path)'. Check the storage directory's space and permissions.",
            cause: String(cString: strerror(errno)))
    }
}
