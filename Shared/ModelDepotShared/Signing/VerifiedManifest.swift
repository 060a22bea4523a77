/// A manifest whose signatures checked against a trusted root, with the keys that vouched for it.
public struct VerifiedManifest: Sendable, Hashable {
    /// The manifest.
    public let manifest: ModelManifest
    /// The ids of the manifest keys whose signatures verified. A device remembers them with the
    /// manifest version it accepts, so that a later root document that removes or revokes one of
    /// them also withdraws what it vouched for (TUF's rule after a key rotation).
    public let signers: Set<String>
}
