import Foundation

/// A value that several threads change under a lock: what `Synchronization.Mutex` does, on the
/// systems the SDK supports below iOS 18 and macOS 15.
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is read and written only inside `lock`.
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    /// Runs `body` with the value while holding the lock.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
