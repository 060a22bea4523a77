/// `GET /v1/admin/signing`: the server's online manifest keys and the newest root document.
public struct SigningStatus: Sendable, Hashable, Codable {
    /// The key manifests are signed with now.
    public var active: PublicSigningKey
    /// A key made for the next rotation, used once a root document lists it.
    public var pending: PublicSigningKey?
    /// The newest root document's version; `nil` until `depot keys root init`.
    public var rootVersion: Int?

    /// Creates a status.
    public init(active: PublicSigningKey, pending: PublicSigningKey?, rootVersion: Int?) {
        self.active = active
        self.pending = pending
        self.rootVersion = rootVersion
    }
}
