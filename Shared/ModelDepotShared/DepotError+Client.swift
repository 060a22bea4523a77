extension DepotError.Code {
    /// A downloaded file's size differs from its manifest's.
    public static let sizeMismatch = Self("size_mismatch")
}

extension DepotError.Code {
    /// Download conditions (network, power, idle, background) did not hold (in time).
    public static let conditionsNotMet = Self("conditions_not_met")
    /// The device lacks the space a download needs.
    public static let notEnoughSpace = Self("not_enough_space")
    /// The app cancelled a check or download.
    public static let cancelled = Self("cancelled")
}

extension DepotError.Code {
    /// A download URL or a redirect names an origin that is neither the server's nor one the app allows.
    public static let originNotAllowed = Self("origin_not_allowed")
    /// A redirect goes from `https` to `http`.
    public static let insecureRedirect = Self("insecure_redirect")
    /// No byte of a download arrived for the stall timeout.
    public static let transferStalled = Self("transfer_stalled")
    /// A download's bytes arrived more slowly than the minimum rate over its window.
    public static let transferTooSlow = Self("transfer_too_slow")
}
