import Foundation
import ModelDepotShared
import NIOCore

/// Keeps model files by their SHA-256: immutable, deduplicated, written atomically. Two kinds:
/// ``FileSystemBlobStore`` (files under the storage directory, served with `sendfile`) and
/// ``S3BlobStore`` (objects in an S3-compatible store, streamed through or redirected to).
public protocol BlobStore: Sendable {
    /// Starts an upload into temporary space; nothing is visible until it is committed
    /// (``BlobUpload/commit(sha256:)``).
    func beginUpload() throws(DepotError) -> any BlobUpload
    /// How a blob's bytes reach a device from this store.
    var delivery: BlobDelivery { get }
    /// Where a blob's file is on this machine, or would be; `nil` for a store that keeps no
    /// local files.
    func filePath(of sha256: String) -> String?
    /// Runs `body` with the path of a local file holding a blob of `size` bytes: the stored file
    /// itself, or a copy fetched from the store into `directory` for the call (removed after).
    /// - Throws: ``DepotError`` `internal_error` for a blob missing or of another size.
    func withLocalFile<Result: Sendable>(
        of sha256: String, size: Int, in directory: URL,
        _ body: (String) async throws -> Result
    ) async throws -> Result
    /// Removes a blob nothing references any more.
    func remove(_ sha256: String) async throws(DepotError)
    /// Every blob digest the store holds.
    func storedDigests() async throws -> [String]
    /// Removes what uploads started before `date` left behind without finishing (staged objects,
    /// unfinished multipart uploads); returns how many.
    func removeAbandonedUploads(startedBefore date: Date) async throws -> Int
    /// Throws when the store cannot be reached (`/readyz`).
    func checkReachable() async throws
}

/// An upload in progress, written in pieces, in order, by one request, into the store that
/// began it.
public protocol BlobUpload: AnyObject, Sendable {
    /// Appends bytes; they may still be on their way to storage when this returns.
    func write(_ bytes: ByteBuffer) async throws(DepotError)
    /// Writes everything still staged and makes it durable; called once, after the last write.
    /// - Returns: The SHA-256 (lower-case hex) of every byte written.
    func finish() async throws(DepotError) -> String
    /// The finished upload's bytes where they lie, for a check that reads only what it needs
    /// (``UploadService`` verifies the model through it).
    func finishedBytes() async -> UploadedBytes
    /// Makes the finished upload visible in its store under its digest; identical content is
    /// stored once.
    func commit(sha256: String) async throws(DepotError)
    /// Throws the upload away, once any write in flight has ended.
    func discard() async
}

/// Where a finished upload's bytes can be read.
public enum UploadedBytes: Sendable {
    /// A file on this machine.
    case file(path: String)
    /// Pages fetched from the store on demand; each fetch blocks its thread.
    case paged(PagedBytes)
}

/// How the bytes of a blob reach a device, decided by the store the server runs with.
public enum BlobDelivery: Sendable {
    /// From the file on this machine (with `sendfile` on the hot path).
    case file
    /// Streamed through this server: the bytes of `range` of a blob of `size` bytes.
    case stream(@Sendable (_ sha256: String, _ range: ClosedRange<Int>, _ size: Int) async throws -> BlobByteStream)
    /// A `307` to a URL that serves the blob without credentials for a while.
    case redirect(@Sendable (_ sha256: String) -> String)
}

/// A blob's bytes as a store streams them, in order: whatever client the store reads with stays
/// behind it.
public struct BlobByteStream: AsyncSequence, Sendable {
    public typealias Element = ByteBuffer

    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let nextChunk: () async throws -> ByteBuffer?

        public mutating func next() async throws -> ByteBuffer? { try await nextChunk() }
    }

    private let start: @Sendable () -> AsyncIterator

    /// The chunks of `source`, as they arrive.
    public init<Source: AsyncSequence & Sendable>(_ source: Source) where Source.Element == ByteBuffer {
        start = {
            var iterator = source.makeAsyncIterator()
            return AsyncIterator { try await iterator.next() }
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { start() }
}
