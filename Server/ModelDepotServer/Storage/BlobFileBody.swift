import Hummingbird
import NIOCore
import NIOPosix

/// Streams a byte range of a blob file as a response body: one chunk read (on NIO's thread
/// pool) per chunk written, so a slow client holds at most one chunk of memory.
struct BlobFileBody {
    static let chunkSize = 128 * 1024
    let fileIO = NonBlockingFileIO(threadPool: .singleton)

    func body(path: String, range: ClosedRange<Int>) -> ResponseBody {
        ResponseBody(contentLength: range.count) { writer in
            try await fileIO.withFileHandle(path: path, mode: .read) { handle in
                var offset = range.lowerBound
                while offset <= range.upperBound {
                    let count = min(Self.chunkSize, range.upperBound - offset + 1)
                    let chunk = try await fileIO.read(fileHandle: handle, fromOffset: Int64(offset), byteCount: count,
                                                      allocator: ByteBufferAllocator())
                    guard chunk.readableBytes > 0 else { break }
                    try await writer.write(chunk)
                    offset += chunk.readableBytes
                }
            }
            try await writer.finish(nil)
        }
    }
}
