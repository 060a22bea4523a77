import Foundation

// How the tests wait for what they observe from outside (a file, a counter, a server's answer):
// they look every 20 ms until it holds or the time is up, and never sleep for a guessed while.

/// Whether `condition` came true within `seconds`. Suspends between looks, so the work it waits
/// for can run on the test's threads.
public func eventually(within seconds: Double = 20, _ condition: () async throws -> Bool) async rethrows -> Bool {
    try await polled(within: seconds, condition, until: { $0 })
}

/// Whether `condition` came true within `seconds`, blocking the thread between looks: for
/// synchronous tests.
public func eventually(within seconds: Double = 20, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        usleep(20_000)
    }
    return try condition()
}

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

/// How long `condition` took to come true, looking every 20 ms for at most `seconds` (`nil`:
/// it never did).
public func timeUntil(within seconds: Double = 10, _ condition: () throws -> Bool) rethrows -> Double? {
    let start = Date()
    return try eventually(within: seconds, condition) ? Date().timeIntervalSince(start) : nil
}
