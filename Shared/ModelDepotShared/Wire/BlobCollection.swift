/// What `POST /v1/admin/blobs/collect` (`depot gc`) removed, or would remove.
public struct BlobCollection: Sendable, Hashable, Codable {
    /// The blobs no version referenced, removed (or, in a dry run, to be removed).
    public var removedBlobs: [String]
    /// Staged objects and unfinished multipart uploads abandoned for a day, removed.
    public var removedUploads: Int
    public var dryRun: Bool
    /// An upload was naming a blob, or another replica was collecting: no blob was removed;
    /// try again.
    public var busy: Bool

    public init(removedBlobs: [String], removedUploads: Int, dryRun: Bool, busy: Bool) {
        self.removedBlobs = removedBlobs
        self.removedUploads = removedUploads
        self.dryRun = dryRun
        self.busy = busy
    }
}
