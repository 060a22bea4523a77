import Hummingbird
import NIOCore
import NIOFileSystem

/// Streams a byte range of a blob file as a response body: one chunk read (on NIO's file
/// system's thread pool) per chunk written.
///
/// The response writer accepts a chunk as soon as the connection was last seen writable, and
/// hands it to the connection's event loop; under load that loop falls behind and chunks pile
/// up (hundreds of MB for eight 100 MB downloads). So after each chunk the writer waits for a
/// no-op on that event loop every few chunks: every chunk queued before it has been handed to
/// the socket, and the connection's writability is current, before more are read.
struct BlobFileBody {
    static let chunkSize = 128 * 1024
    /// Chunks written between waits for the event loop: at most 1 MB queued per connection.
    static let chunksPerCatchUp = 8

    /// - Parameter onComplete: Called once every byte of the range has been handed to the connection.
    func body(
        path: String, range: ClosedRange<Int>, eventLoop: any EventLoop,
        onComplete: @escaping @Sendable () -> Void
    ) -> ResponseBody {
        ResponseBody(contentLength: range.count) { writer in
            try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(path)) { handle in
                var offset = range.lowerBound
                var chunks = 0
                while offset <= range.upperBound {
                    let count = min(Self.chunkSize, range.upperBound - offset + 1)
                    let chunk = try await handle.readChunk(fromAbsoluteOffset: Int64(offset), length: .bytes(Int64(count)))
                    guard chunk.readableBytes > 0 else { break }
                    try await writer.write(chunk)
                    chunks += 1
                    if chunks % Self.chunksPerCatchUp == 0 { try await eventLoop.submit {}.get() }
                    offset += chunk.readableBytes
                }
            }
            try await writer.finish(nil)
            onComplete()
        }
    }
}
