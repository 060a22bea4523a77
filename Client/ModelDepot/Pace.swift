/// How fast a transfer's bytes arrive, against its stall timeout and minimum rate: a value type
/// the transport's watchdog asks at every tick.
struct Pace: Sendable {
    /// Body bytes so far.
    private(set) var received = 0
    private var lastArrival: ContinuousClock.Instant
    private var headed = false
    /// (time, body bytes so far) at the head and each tick since, trimmed to the current window.
    private var samples: [(at: ContinuousClock.Instant, received: Int)]

    init(now: ContinuousClock.Instant) {
        lastArrival = now
        samples = [(now, 0)]
    }

    /// Records the response head: the minimum rate counts body bytes from here on (the wait for
    /// the head is the stall timeout's to judge).
    mutating func headArrived(at now: ContinuousClock.Instant) {
        lastArrival = now
        headed = true
        samples = [(now, received)]
    }

    /// Records body bytes arriving.
    mutating func arrived(_ bytes: Int, at now: ContinuousClock.Instant) {
        received += bytes
        lastArrival = now
    }

    /// The limit the transfer broke by `now`, if any.
    mutating func failure(at now: ContinuousClock.Instant, limits: TransferLimits) -> (any Error)? {
        if now - lastArrival >= limits.stallTimeout {
            return TransferStalled(timeout: limits.stallTimeout, received: received)
        }
        guard let rate = limits.minimumRate, headed else { return nil }
        samples.append((now, received))
        // The newest sample at least a window old is where the current window starts.
        guard let start = samples.lastIndex(where: { now - $0.at >= rate.window }) else { return nil }
        samples.removeFirst(start)
        let inWindow = received - samples[0].received
        return inWindow < rate.bytesPerWindow ? TransferTooSlow(minimum: rate, receivedInWindow: inWindow) : nil
    }
}
