import Foundation
import Synchronization

/// A wall clock a test moves (for expiries and re-signing), passed where a `() -> Date` is taken.
public final class MovableClock: Sendable {
    private let value = Mutex(Date())

    public init() {}

    public var now: Date { value.withLock { $0 } }

    public func advance(by seconds: TimeInterval) { value.withLock { $0 = $0.addingTimeInterval(seconds) } }
}
