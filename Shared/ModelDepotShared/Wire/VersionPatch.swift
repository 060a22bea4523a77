import Foundation

/// A patch the server made to one of a version's files from the same file of an earlier
/// version: `GET /v1/admin/models/{name}/versions/{number}/patches`.
public struct VersionPatch: Sendable, Hashable, Codable {
    /// The version whose file it applies to.
    public var fromVersion: Int
    /// The companion file's name, or `nil` for the model's file.
    public var file: String?
    /// The SHA-256 of the file it applies to.
    public var fromSha256: String
    /// The patch blob's SHA-256, or `nil` when it is not offered (larger than 80% of the file).
    public var sha256: String?
    /// The patch's size in bytes.
    public var size: Int
    /// Whether manifests offer it.
    public var offered: Bool { sha256 != nil }

    public init(fromVersion: Int, file: String?, fromSha256: String, sha256: String?, size: Int) {
        self.fromVersion = fromVersion
        self.file = file
        self.fromSha256 = fromSha256
        self.sha256 = sha256
        self.size = size
    }

    private enum CodingKeys: String, CodingKey {
        case fromVersion, file, fromSha256, sha256, size, offered
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        fromVersion = try container.decode(Int.self, forKey: .fromVersion)
        file = try container.decodeIfPresent(String.self, forKey: .file)
        fromSha256 = try container.decode(String.self, forKey: .fromSha256)
        sha256 = try container.decodeIfPresent(String.self, forKey: .sha256)
        size = try container.decode(Int.self, forKey: .size)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(fromVersion, forKey: .fromVersion)
        try container.encodeIfPresent(file, forKey: .file)
        try container.encode(fromSha256, forKey: .fromSha256)
        try container.encodeIfPresent(sha256, forKey: .sha256)
        try container.encode(size, forKey: .size)
        try container.encode(offered, forKey: .offered)
    }
}

/// The body of `GET /v1/admin/models/{name}/versions/{number}/patches`.
public struct VersionPatchList: Sendable, Hashable, Codable {
    /// The version's patches, by the version they apply to, then by file.
    public var patches: [VersionPatch]

    public init(patches: [VersionPatch]) { self.patches = patches }
}
