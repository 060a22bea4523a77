/// What `depot migrate` moved (its `--json` output).
public struct MigrationReport: Sendable, Hashable, Codable {
    public var models: Int
    public var versions: Int
    public var keys: Int
    public var blobs: Int
    /// The blobs' bytes, each hashed again on its way.
    public var bytes: Int

    public init(models: Int, versions: Int, keys: Int, blobs: Int, bytes: Int) {
        self.models = models
        self.versions = versions
        self.keys = keys
        self.blobs = blobs
        self.bytes = bytes
    }
}
