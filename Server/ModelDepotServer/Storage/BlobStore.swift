import ModelDepotShared
import NIOCore

/// Keeps model files by their SHA-256: immutable, deduplicated, written atomically.
public protocol BlobStore: Sendable {
    /// Starts an upload into temporary space; nothing is visible until ``commit(_:sha256:)``.
    func beginUpload() throws(DepotError) -> BlobUpload
    /// Makes a finished upload (see ``BlobUpload/finish()``) visible under its digest; identical
    /// content is stored once.
    func commit(_ upload: BlobUpload, sha256: String) throws(DepotError)
    /// Throws away an upload that will not be committed, once any write in flight has ended.
    func discard(_ upload: BlobUpload) async
    /// Where a blob's file is, or would be.
    func location(of sha256: String) -> String
    /// Removes a blob nothing references any more.
    func remove(_ sha256: String) throws(DepotError)
}

/// An upload in progress: a temporary file written in pieces, in order, by one request.
public protocol BlobUpload: AnyObject, Sendable {
    /// The temporary file's path (for verification once ``finish()`` returned).
    var temporaryPath: String { get }
    /// Appends bytes; they may still be on their way to the file when this returns.
    func write(_ bytes: ByteBuffer) async throws(DepotError)
    /// Writes everything still staged and makes the file durable; called once, after the last write.
    /// - Returns: The SHA-256 (lower-case hex) of every byte written.
    func finish() async throws(DepotError) -> String
}
