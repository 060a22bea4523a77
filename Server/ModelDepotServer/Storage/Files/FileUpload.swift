import Crypto
import ModelDepotShared
import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
    private let systemClose = Glibc.close
#elseif canImport(Darwin)
    import Darwin
    private let systemClose = Darwin.close
#endif

/// A temporary file being written by one upload, and the SHA-256 of its bytes.
///
/// The request copies what it receives into 4 MiB aligned buffers; each full one is hashed by a
/// task of its own (in order: each starts from the hash of the buffers before it) and written by
/// a job on NIO's thread pool, while the request goes on filling the next, several buffers at
/// once. So the request's task only copies, and hashing, the one step that cannot be split, runs
/// beside it. Where the file system allows it the file is opened with `O_DIRECT`, so neither the
/// copy into the page cache nor its writeback costs CPU, and the final `fsync` finds the data
/// already on the device.
final class FileUpload: BlobUpload, @unchecked Sendable {
    // @unchecked: the request task calls write, finish and close strictly in sequence; a buffer
    // handed on is only read, by its hashing task and its write job, until the request awaits both.

    /// Bytes per staged write.
    static let stagingSize = 4 << 20
    /// Writes that may be in flight at once (the device works on several; the request waits only
    /// when all of them are still going).
    static let writesInFlight = 4

    let temporaryPath: String
    /// The store the upload is committed into.
    private let store: FileSystemBlobStore
    private let file: UploadDescriptor
    private let pool: NIOThreadPool
    /// The buffer being filled, once the first bytes came.
    private var filling: StagingBuffer?
    /// Writes still going, oldest first; each hands its buffer back once it is written and hashed.
    private var inFlight: [Task<StagingBuffer, any Error>] = []
    /// The hash of every buffer handed on so far, once the last of them is hashed (`nil` before
    /// the first).
    private var hashed: Task<SHA256, Never>?
    /// Bytes handed to writes so far (the file offset of the next one).
    private var staged = 0

    /// Whether the file is written with direct I/O (false where the file system refuses it).
    var usesDirectIO: Bool { file.isDirect }

    /// Creates the temporary file (it must not exist yet).
    /// - Parameters:
    ///   - path: Where to write.
    ///   - store: The store it is committed into.
    ///   - pool: Where the blocking writes run.
    init(path: String, store: FileSystemBlobStore, pool: NIOThreadPool = .singleton) throws(DepotError) {
        temporaryPath = path
        self.store = store
        file = try UploadDescriptor(path: path, direct: store.directIO)
        self.pool = pool
    }

    deinit { file.close() }

    func write(_ bytes: ByteBuffer) async throws(DepotError) {
        var bytes = bytes
        while bytes.readableBytes > 0 {
            let buffer = try await fillingBuffer()
            buffer.append(from: &bytes)
            if buffer.isFull {
                startWrite(of: buffer, last: false)
                filling = nil
            }
        }
    }

    func finish() async throws(DepotError) -> String {
        startWrite(of: try await fillingBuffer(), last: true)
        filling = nil
        while try await collectWrite() != nil {}
        file.close()
        return await (hashed?.value ?? SHA256()).finalize().hex
    }

    func finishedBytes() async -> UploadedBytes {
        .file(path: temporaryPath)
    }

    func commit(sha256: String) async throws(DepotError) {
        try store.place(self, sha256: sha256)
    }

    func discard() async {
        await close()
        unlink(temporaryPath)
    }

    /// Waits for the writes still in flight, then closes the file (errors no longer matter).
    func close() async {
        for write in inFlight { _ = try? await write.value }
        inFlight = []
        file.close()
    }

    /// The buffer to fill: the current one, a new one while fewer writes than allowed are in
    /// flight, or else the oldest write's once it is done.
    private func fillingBuffer() async throws(DepotError) -> StagingBuffer {
        if let filling { return filling }
        let buffer = inFlight.count < Self.writesInFlight ? try StagingBuffer(capacity: Self.stagingSize) : try await collectWrite()!
        buffer.reset()
        filling = buffer
        return buffer
    }

    /// Starts hashing `buffer` after the buffers before it, and a job that writes it at the next
    /// offset.
    private func startWrite(of buffer: StagingBuffer, last: Bool) {
        let offset = staged
        staged += buffer.count
        let previous = hashed
        let count = buffer.count
        let hashing = Task {
            var hasher = await previous?.value ?? SHA256()
            hasher.update(bufferPointer: UnsafeRawBufferPointer(start: buffer.bytes, count: count))
            return hasher
        }
        hashed = hashing
        let file = file
        let pool = pool
        inFlight.append(
            Task {
                try await pool.runIfActive {
                    if last {
                        try file.writeLast(buffer, at: offset)
                    } else {
                        try file.write(buffer, at: offset)
                    }
                }
                _ = await hashing.value
                return buffer
            })
    }

    /// The buffer of the oldest write in flight once it is on the file, or `nil` when none was.
    private func collectWrite() async throws(DepotError) -> StagingBuffer? {
        guard !inFlight.isEmpty else { return nil }
        let task = inFlight.removeFirst()
        do {
            return try await task.value
        } catch {
            throw Self.depotError(error, path: temporaryPath)
        }
    }

    private static func depotError(_ error: any Error, path: String) -> DepotError {
        (error as? DepotError)
            ?? DepotError(.internalError, "Could not write '\(path)'. The upload was not stored; try it again.", cause: "\(error)")
    }
}

/// The temporary file's descriptor, shared by the request and the pool job writing it.
private final class UploadDescriptor: @unchecked Sendable {
    // @unchecked: `descriptor` is set at creation and changed only by `close`, which the request
    // calls once no job is in flight; jobs running at once write with `pwrite` at offsets of
    // their own, and whether direct I/O is on is atomic.
    private var descriptor: Int32
    private let direct: Atomic<Bool>
    var isDirect: Bool { direct.load(ordering: .relaxed) }
    let path: String

    init(path: String, direct: Bool) throws(DepotError) {
        self.path = path
        let flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC
        var descriptor: Int32 = -1
        if direct, let directFlag = Self.directFlag { descriptor = open(path, flags | directFlag, 0o600) }
        self.direct = Atomic(descriptor >= 0)
        if descriptor < 0 { descriptor = open(path, flags, 0o600) }
        guard descriptor >= 0 else { throw FileSystemBlobStore.failure("create", path) }
        self.descriptor = descriptor
    }

    /// Writes a full buffer at `offset`.
    func write(_ buffer: StagingBuffer, at offset: Int) throws(DepotError) {
        try write(buffer.bytes, count: buffer.count, at: offset)
    }

    /// Writes the last, partly filled buffer, then makes the file durable. With direct I/O the
    /// block-aligned write is padded with zeros and the file cut back to its size.
    func writeLast(_ buffer: StagingBuffer, at offset: Int) throws(DepotError) {
        if buffer.count > 0 {
            let padded = isDirect ? buffer.zeroPaddedCount() : buffer.count
            try write(buffer.bytes, count: padded, at: offset)
            if padded != buffer.count, ftruncate(descriptor, off_t(offset + buffer.count)) != 0 {
                throw FileSystemBlobStore.failure("truncate", path)
            }
        }
        guard fsync(descriptor) == 0 else { throw FileSystemBlobStore.failure("flush", path) }
    }

    func close() {
        if descriptor >= 0 { _ = systemClose(descriptor) }
        descriptor = -1
    }

    private func write(_ bytes: UnsafeMutableRawPointer, count: Int, at offset: Int) throws(DepotError) {
        var done = 0
        while done < count {
            let written = pwrite(descriptor, bytes + done, count - done, off_t(offset + done))
            if written > 0 {
                done += written
            } else if written < 0, errno == EINTR {
                continue
            } else if written < 0, errno == EINVAL, isDirect, done == 0 {
                try stopDirectIO()
            } else {
                throw FileSystemBlobStore.failure("write", path)
            }
        }
    }

    /// The file system took `O_DIRECT` at open but refuses these writes (a block size above the
    /// buffer's alignment): go on with ordinary writes.
    private func stopDirectIO() throws(DepotError) {
        let flags = fcntl(descriptor, F_GETFL)
        guard let directFlag = Self.directFlag, flags >= 0, fcntl(descriptor, F_SETFL, flags & ~directFlag) == 0 else {
            throw FileSystemBlobStore.failure("write", path)
        }
        direct.store(false, ordering: .relaxed)
    }

    /// Linux's `O_DIRECT`, which Swift's Glibc module leaves out (it needs `_GNU_SOURCE`); `nil`
    /// where direct I/O is not used.
    private static let directFlag: Int32? = {
        #if os(Linux) && arch(x86_64)
            return 0o40000
        #elseif os(Linux) && arch(arm64)
            return 0o200000
        #else
            return nil
        #endif
    }()
}
