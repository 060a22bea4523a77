import ModelDepotShared

/// Keeps model files by their SHA-256: immutable, deduplicated, written atomically.
public protocol BlobStore: Sendable {
    /// Starts an upload into temporary space; nothing is visible until ``commit(_:)``.
    func beginUpload() throws(DepotError) -> BlobUpload
    /// Makes a finished upload durable under its digest; identical content is stored once.
    func commit(_ upload: BlobUpload, sha256: String) throws(DepotError)
    /// Throws away an upload that will not be committed.
    func discard(_ upload: BlobUpload)
    /// The file holding a blob, or `nil` when there is none.
    func path(of sha256: String) -> String?
    /// Removes a blob nothing references any more.
    func remove(_ sha256: String) throws(DepotError)
}

/// An upload in progress: a temporary file written in pieces.
public protocol BlobUpload: AnyObject, Sendable {
    /// The temporary file's path (for verification before commit).
    var temporaryPath: String { get }
    /// Appends bytes.
    func write(_ bytes: UnsafeRawBufferPointer) throws(DepotError)
}
