import Foundation

// How the tests wait for what they observe from outside (a file, a counter, a server's answer):
// they look every 20 ms until it holds or the time is up, and never sleep for a guessed while.
// Between looks they suspend, so the work they wait for can run on the test's threads.

/// The first value of `look` that `done` accepts, or the last one once `seconds` have passed.
public func polled<Value>(
    within seconds: Double = 20, _ look: () async throws -> Value, until done: (Value) -> Bool
) async rethrows -> Value {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        let value = try await look()
        if done(value) || Date() > deadline { return value }
        try? await Task.sleep(for: .milliseconds(20))
    }
}

/// Whether `condition` came true within `seconds`.
public func eventually(within seconds: Double = 20, _ condition: () async throws -> Bool) async rethrows -> Bool {
    try await polled(within: seconds, condition, until: { $0 })
}

/// How long `condition` took to come true, looking for at most `seconds` (`nil`: it never did).
public func timeUntil(within seconds: Double = 10, _ condition: () async throws -> Bool) async rethrows -> Double? {
    let start = Date()
    return try await eventually(within: seconds, condition) ? Date().timeIntervalSince(start) : nil
}
