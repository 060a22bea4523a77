import Foundation

extension Duration {
    /// The duration in seconds, for the SDK's modules (a window's bytes, a schedule's date, a
    /// latency in milliseconds).
    package var seconds: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
