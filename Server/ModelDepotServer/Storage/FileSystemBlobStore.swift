#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
private let systemClose = Glibc.close
#elseif canImport(Darwin)
import Darwin
private let systemWrite = Darwin.write
private let systemClose = Darwin.close
#endif
import Foundation
import ModelDepotShared

/// Blobs as files: `blobs/sha256/ab/<hex>`, written to `tmp/` first, then fsync, rename, fsync
/// of the directory — a crash leaves either no blob or a whole one.
public struct FileSystemBlobStore: BlobStore {
    let root: String

    var blobsDirectory: String { root + "/blobs/sha256" }
    var temporaryDirectory: String { root + "/tmp" }

    /// Opens the store under a storage directory, creating its folders and removing temporary
    /// files that a crash left behind.
    /// - Parameter root: The storage directory.
    /// - Throws: ``DepotError`` when the folders cannot be created.
    public init(root: String) throws(DepotError) {
        self.root = root
        do {
            try FileManager.default.createDirectory(atPath: root + "/blobs/sha256", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: root + "/tmp", withIntermediateDirectories: true)
            for stray in try FileManager.default.contentsOfDirectory(atPath: root + "/tmp") {
                try FileManager.default.removeItem(atPath: root + "/tmp/" + stray)
            }
        } catch {
            throw DepotError(.internalError, "Could not prepare the storage directory '\(root)': \(error.localizedDescription). Check that it is writable.")
        }
    }

    public func beginUpload() throws(DepotError) -> BlobUpload {
        try FileUpload(path: temporaryDirectory + "/upload-" + UUID().uuidString)
    }

    public func commit(_ upload: BlobUpload, sha256: String) throws(DepotError) {
        guard let upload = upload as? FileUpload else { preconditionFailure("upload from another store") }
        try upload.synchronizeAndClose()
        let directory = blobsDirectory + "/" + sha256.prefix(2)
        let destination = directory + "/" + sha256
        if access(destination, F_OK) == 0 {
            unlink(upload.temporaryPath)
            return
        }
        guard mkdir(directory, 0o755) == 0 || errno == EEXIST else { throw Self.failure("create", directory) }
        guard rename(upload.temporaryPath, destination) == 0 else { throw Self.failure("move the upload to", destination) }
        try Self.synchronizeDirectory(directory)
    }

    public func discard(_ upload: BlobUpload) {
        (upload as? FileUpload)?.close()
        unlink(upload.temporaryPath)
    }

    public func path(of sha256: String) -> String? {
        let path = blobsDirectory + "/" + sha256.prefix(2) + "/" + sha256
        return access(path, R_OK) == 0 ? path : nil
    }

    public func remove(_ sha256: String) throws(DepotError) {
        let path = blobsDirectory + "/" + sha256.prefix(2) + "/" + sha256
        guard unlink(path) == 0 || errno == ENOENT else { throw Self.failure("remove", path) }
    }

    /// Every blob digest on disk (for start-up clean-up of blobs no version references).
    func storedDigests() -> [String] {
        let prefixes = (try? FileManager.default.contentsOfDirectory(atPath: blobsDirectory)) ?? []
        return prefixes.flatMap { prefix in
            ((try? FileManager.default.contentsOfDirectory(atPath: blobsDirectory + "/" + prefix)) ?? [])
        }
    }

    static func synchronizeDirectory(_ path: String) throws(DepotError) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw failure("open", path) }
        defer { _ = systemClose(descriptor) }
        guard fsync(descriptor) == 0 else { throw failure("flush", path) }
    }

    static func failure(_ operation: String, _ path: String) -> DepotError {
        DepotError(.internalError, "Could not \(operation) '\(path)': \(String(cString: strerror(errno))). Check the storage directory's space and permissions.")
    }
}

/// A temporary file being written by one upload.
final class FileUpload: BlobUpload, @unchecked Sendable {
    // @unchecked: one upload is written by one request task, strictly in sequence; the
    // descriptor is never shared.
    let temporaryPath: String
    private var descriptor: Int32
    private var written = 0
    private var writebackStarted = 0
    /// Bytes between requests to the kernel to start writing the file out (and drop it from the
    /// page cache), so that the final fsync finds most of it on disk already.
    private static let writebackInterval = 16 << 20

    init(path: String) throws(DepotError) {
        temporaryPath = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard descriptor >= 0 else { throw FileSystemBlobStore.failure("create", path) }
    }

    deinit { close() }

    func write(_ bytes: UnsafeRawBufferPointer) throws(DepotError) {
        var offset = 0
        while offset < bytes.count {
            let written = systemWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            guard written > 0 else {
                if written < 0, errno == EINTR { continue }
                throw FileSystemBlobStore.failure("write", temporaryPath)
            }
            offset += written
        }
        self.written += bytes.count
        startWritebackIfDue()
    }

    private func startWritebackIfDue() {
        #if os(Linux)
        guard written - writebackStarted >= Self.writebackInterval else { return }
        _ = posix_fadvise(descriptor, off_t(writebackStarted), off_t(written - writebackStarted), POSIX_FADV_DONTNEED)
        writebackStarted = written
        #endif
    }

    func synchronizeAndClose() throws(DepotError) {
        guard fsync(descriptor) == 0 else { throw FileSystemBlobStore.failure("flush", temporaryPath) }
        close()
    }

    func close() {
        if descriptor >= 0 { _ = systemClose(descriptor) }
        descriptor = -1
    }
}
