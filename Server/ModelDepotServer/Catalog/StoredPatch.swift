import ModelDepotShared

/// A patch the server made between two versions' files (the model's, or a companion file of the
/// same name in both): offered in the newer version's manifest when ``sha256`` is set, kept as a
/// record of the work done when it was not worth offering.
public struct StoredPatch: Sendable, Hashable {
    public var model: ModelName
    /// The version whose file it makes.
    public var version: Int
    /// The version whose file it applies to.
    public var fromVersion: Int
    /// The companion file's name, or `""` for the model's file.
    public var file: String
    /// The SHA-256 of the file it applies to.
    public var fromSha256: String
    /// The patch blob's SHA-256, or `nil` for a patch not offered (too large to be worth it).
    public var sha256: String?
    /// The patch's size in bytes (also when not offered).
    public var size: Int

    public init(model: ModelName, version: Int, fromVersion: Int, file: String, fromSha256: String, sha256: String?, size: Int) {
        self.model = model
        self.version = version
        self.fromVersion = fromVersion
        self.file = file
        self.fromSha256 = fromSha256
        self.sha256 = sha256
        self.size = size
    }
}

/// A file of a published version (its model as file `""`, or a companion file), as patches are
/// planned from.
public struct PublishedFile: Sendable, Hashable {
    public var model: ModelName
    public var version: Int
    /// The companion file's name, or `""` for the model's file.
    public var file: String
    public var sha256: String
    public var size: Int

    public init(model: ModelName, version: Int, file: String, sha256: String, size: Int) {
        self.model = model
        self.version = version
        self.file = file
        self.sha256 = sha256
        self.size = size
    }
}
