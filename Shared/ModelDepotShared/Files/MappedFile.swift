#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#endif

/// A file mapped read-only into memory: the verifier and the hasher read a model of any size
/// without copying it, and the kernel pages it in and out as needed.
///
/// ```swift
/// let file = try MappedFile(path: "model.tflite")
/// let model = try file.withBytes { try TFLiteVerifier().verify($0) }
/// ```
public final class MappedFile: @unchecked Sendable {
    // @unchecked: `base` and `count` never change after init, the mapping is read-only
    // (PROT_READ), and it is unmapped only in deinit, when no one else can hold the object.
    private let base: UnsafeRawPointer?
    /// The file's size in bytes when it was mapped.
    public let count: Int
    /// The path the file was mapped from.
    public let path: String

    /// Maps a file.
    /// - Parameter path: The file's path.
    /// - Throws: ``DepotError`` with code `file_unreadable` naming the path and the system's reason.
    public init(path: String) throws(DepotError) {
        self.path = path
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw Self.failure("open", path) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw Self.failure("stat", path) }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw DepotError(.fileUnreadable, "'\(path)' is not a regular file; give the path of a .tflite file.")
        }
        count = Int(status.st_size)
        guard count > 0 else {
            base = nil
            return
        }
        let mapped = mmap(nil, count, PROT_READ, MAP_PRIVATE, descriptor, 0)
        guard let mapped, mapped != MAP_FAILED else { throw Self.failure("map", path) }
        base = UnsafeRawPointer(mapped)
    }

    deinit {
        if let base { munmap(UnsafeMutableRawPointer(mutating: base), count) }
    }

    /// Calls `body` with the file's bytes; they stay valid only during the call.
    /// - Parameter body: Reads the bytes.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func withBytes<Result, Failure: Error>(_ body: (UnsafeRawBufferPointer) throws(Failure) -> Result) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    static func failure(_ operation: String, _ path: String) -> DepotError {
        DepotError(
            .fileUnreadable, "Could not \(operation) '\(path)': \(String(cString: strerror(errno))). Check the path and its permissions.")
    }
}
