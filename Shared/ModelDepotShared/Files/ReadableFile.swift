#if canImport(Darwin)
    import Darwin
    private let systemRead = Darwin.read
#elseif canImport(Glibc)
    import Glibc
    private let systemRead = Glibc.read
#endif

/// A file open for sequential reading, closed when the value goes away.
final class ReadableFile {
    private let descriptor: Int32
    let path: String

    init(path: String) throws(DepotError) {
        self.path = path
        descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw MappedFile.failure("open", path) }
    }

    deinit { close(descriptor) }

    /// Reads up to `buffer.count` bytes; 0 at the end of the file.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(DepotError) -> Int {
        while true {
            let count = systemRead(descriptor, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            guard errno == EINTR else { throw MappedFile.failure("read", path) }
        }
    }
}
