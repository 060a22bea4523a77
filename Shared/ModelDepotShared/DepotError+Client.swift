extension DepotError.Code {
    /// A downloaded file's size differs from its manifest's.
    public static let sizeMismatch = Self("size_mismatch")
}
