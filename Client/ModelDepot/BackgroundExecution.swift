/// Asks the system for time to finish work that the app leaving the foreground would otherwise
/// freeze: each range of a download runs inside it, so a range under way when the user switches
/// apps ends (or is cut and resumed later) rather than hanging until a stall timeout.
///
/// `UIKitBackgroundExecution` (`beginBackgroundTask`) is the default on iOS; elsewhere
/// ``ImmediateExecution`` runs the work as it is.
public protocol BackgroundExecution: Sendable {
    /// Runs `work` with the system's leave to finish it in the background; when the system takes
    /// that leave back, `work` is cancelled.
    /// - Parameters:
    ///   - name: What the work is, for the system's logs.
    ///   - work: The work.
    func run<Result: Sendable>(named name: String, _ work: @escaping @Sendable () async throws -> Result) async throws -> Result
}

/// Runs work as it is: where the system does not freeze apps in the background.
public struct ImmediateExecution: BackgroundExecution {
    /// Creates the strategy.
    public init() {}

    public func run<Result: Sendable>(named name: String, _ work: @escaping @Sendable () async throws -> Result) async throws -> Result {
        try await work()
    }
}

/// The strategy a configuration uses unless told otherwise: `UIKitBackgroundExecution` where
/// UIKit exists, ``ImmediateExecution`` elsewhere.
public func defaultBackgroundExecution() -> any BackgroundExecution {
    #if canImport(UIKit) && !os(watchOS)
        UIKitBackgroundExecution()
    #else
        ImmediateExecution()
    #endif
}
