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
