extension DepotError.Code {
    /// A manifest carries no signature (or is not a signed envelope at all).
    public static let unsignedManifest = Self("unsigned_manifest")
    /// A signature comes from a key the trusted root document does not list.
    public static let unknownSigningKey = Self("unknown_signing_key")
    /// A signature comes from a key the trusted root document revoked.
    public static let revokedSigningKey = Self("revoked_signing_key")
    /// One key signed the same document twice.
    public static let duplicateSignature = Self("duplicate_signature")
    /// A signature does not verify with the key it names, or too few keys signed.
    public static let invalidSignature = Self("invalid_signature")
    /// A signed envelope, manifest or root document is malformed.
    public static let invalidMetadata = Self("invalid_metadata")
    /// A manifest or root document is larger than the SDK reads.
    public static let metadataTooLarge = Self("metadata_too_large")
    /// A manifest's expiry has passed (the server stopped refreshing it, or the answer was frozen).
    public static let manifestExpired = Self("manifest_expired")
    /// A manifest is older than one the device accepted before (a replay).
    public static let manifestRollback = Self("manifest_rollback")
    /// A manifest is for another model than the one asked for.
    public static let manifestMismatch = Self("manifest_mismatch")
    /// A root document is not signed by the root it claims to follow, or by its own root keys.
    public static let untrustedRoot = Self("untrusted_root")
    /// The newest trusted root document has expired.
    public static let rootExpired = Self("root_expired")
}
