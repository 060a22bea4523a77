import Foundation

/// The payload of a root document (`/v1/keys/root/{n}.json`): which keys may sign root documents
/// and manifests, how many must sign, and which keys were revoked. Signed by the offline root
/// key(s); document N+1 is signed by the root keys of N and of N+1.
public struct RootDocument: Sendable, Hashable, Codable {
    /// Always `root`: a manifest can't pass for a root document.
    public var type = "root"
    /// 1 for the first document, then N+1 for each rotation.
    public var version: Int
    /// When it was signed.
    public var issued: Date
    /// After this the SDK refuses new downloads until a newer root document is published.
    public var expires: Date
    /// Keys that sign root documents.
    public var rootKeys: [PublicSigningKey]
    /// How many root keys must sign.
    public var rootThreshold: Int
    /// Keys that sign manifests (the server's online keys).
    public var manifestKeys: [PublicSigningKey]
    /// How many manifest keys must sign a manifest.
    public var manifestThreshold: Int
    /// Ids of keys no longer trusted for anything.
    public var revokedKeys: [String]

    /// Creates a root document.
    public init(
        version: Int, issued: Date, expires: Date, rootKeys: [PublicSigningKey], rootThreshold: Int = 1,
        manifestKeys: [PublicSigningKey], manifestThreshold: Int = 1, revokedKeys: [String] = []
    ) {
        self.version = version
        self.issued = issued
        self.expires = expires
        self.rootKeys = rootKeys
        self.rootThreshold = rootThreshold
        self.manifestKeys = manifestKeys
        self.manifestThreshold = manifestThreshold
        self.revokedKeys = revokedKeys
    }

    /// Checks the document's own consistency: its type, version, thresholds, keys and revocations.
    /// - Throws: ``DepotError`` (`invalid_metadata`) naming the problem.
    public func validate() throws(DepotError) {
        guard type == "root" else { throw DepotError(.invalidMetadata, "The document's type is '\(type)', not 'root'.") }
        // At most Int32.max, so that the version after it (`version + 1`) is a number too.
        guard (1...Int(Int32.max)).contains(version) else {
            throw DepotError(.invalidMetadata, "Root document version \(version) is outside 1 to \(Int32.max).")
        }
        for (name, keys, threshold) in [("root", rootKeys, rootThreshold), ("manifest", manifestKeys, manifestThreshold)] {
            guard threshold >= 1, threshold <= keys.count else {
                throw DepotError(
                    .invalidMetadata,
                    "Root document v\(version) needs \(threshold) of its \(keys.count) \(name) keys; the threshold must be between 1 and the number of keys."
                )
            }
            for key in keys { _ = try key.key() }
        }
        let revoked = Set(revokedKeys)
        if let listed = (rootKeys + manifestKeys).first(where: { revoked.contains($0.keyid) }) {
            throw DepotError(.invalidMetadata, "Root document v\(version) both lists and revokes key '\(listed.keyid)'.")
        }
    }
}
