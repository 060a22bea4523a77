import ModelDepotShared
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A page-aligned buffer of fixed size that an upload fills and one write empties (direct I/O
/// needs the memory, the length and the file offset aligned to the device's blocks). Mapped
/// from the system rather than taken from malloc, so its pages go back when it is released.
final class StagingBuffer: @unchecked Sendable {
    // @unchecked: the request owns it while filling it; then its hashing task and its write job
    // read it (the write job may zero the padding past `count`, which hashing never reads) until
    // the request has awaited both; never the request and them at once.

    /// The alignment of the memory and of padded lengths.
    static let alignment = 4096

    let bytes: UnsafeMutableRawPointer
    let capacity: Int
    private(set) var count = 0

    /// - Parameter capacity: A multiple of ``alignment``.
    /// - Throws: ``DepotError`` when the system has no memory for it.
    init(capacity: Int) throws(DepotError) {
        precondition(capacity > 0 && capacity % Self.alignment == 0, "a staging buffer holds whole blocks")
        guard let mapped = mmap(nil, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), mapped != MAP_FAILED else {
            throw DepotError(
                .internalError,
                "Could not map \(capacity) bytes for an upload's staging buffer. The upload was not stored; try again when the server has more free memory.",
                cause: String(cString: strerror(errno)))
        }
        bytes = mapped
        self.capacity = capacity
    }

    deinit { munmap(bytes, capacity) }

    var isFull: Bool { count == capacity }

    /// Copies as much of `buffer` as fits and moves its reader index past it.
    func append(from buffer: inout ByteBuffer) {
        let taken = min(capacity - count, buffer.readableBytes)
        buffer.withUnsafeReadableBytes { source in
            (bytes + count).copyMemory(from: source.baseAddress!, byteCount: taken)
        }
        buffer.moveReaderIndex(forwardBy: taken)
        count += taken
    }

    func reset() { count = 0 }

    /// Zeroes the bytes from ``count`` up to the next multiple of ``alignment``; returns that length.
    func zeroPaddedCount() -> Int {
        let padded = (count + Self.alignment - 1) / Self.alignment * Self.alignment
        (bytes + count).initializeMemory(as: UInt8.self, repeating: 0, count: padded - count)
        return padded
    }
}
