import Synchronization

/// Failed authentications, counted per client address and per key id, with exponential backoff.
///
/// - An address that fails `allowance` times in a row (no success from it in between) is refused
///   with `429` for 1 s, then 2 s, 4 s… up to ``longest`` after each further failure, whatever
///   key it sends. A success from the address ends its count, so the many devices behind one
///   carrier NAT keep one revoked install from blocking them all.
/// - A key id (the one a generated secret names) that gets `allowance` wrong secrets is throttled
///   the same way, but only for wrong secrets: its right secret still works, so nobody can lock a
///   fleet's app key out by sending guesses that name its id.
final class AuthenticationThrottle: Sendable {
    /// The longest backoff.
    static let longest: Duration = .seconds(300)
    /// Records kept at most (addresses and key ids); beyond it, records whose backoff ended are
    /// dropped first, and new ones are not counted while none can be.
    static let capacity = 100_000

    private struct Record {
        var failures = 0
        var until: ContinuousClock.Instant?
    }

    /// Consecutive failures allowed before the backoff starts.
    let allowance: Int
    private let records = Mutex<[String: Record]>([:])
    /// Whether any failure, or any backoff, was ever recorded: until then the checks on every
    /// request skip the table (and need no address).
    private let anyFailure = Atomic<Bool>(false)
    private let anyBackoff = Atomic<Bool>(false)

    /// The clock backoffs are measured on (tests hold it still).
    private let clock: @Sendable () -> ContinuousClock.Instant

    init(allowance: Int, clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.allowance = allowance
        self.clock = clock
    }

    /// How long `address` must wait before it may authenticate again, or `nil`.
    func wait(address: @autoclosure () -> String?, now: ContinuousClock.Instant? = nil) -> Duration? {
        guard anyBackoff.load(ordering: .relaxed), let address = address() else { return nil }
        return wait("a " + address, now: now ?? clock())
    }

    /// How long wrong secrets naming `keyID` are refused, or `nil`.
    func wait(keyID: String, now: ContinuousClock.Instant? = nil) -> Duration? {
        guard anyBackoff.load(ordering: .relaxed) else { return nil }
        return wait("k " + keyID, now: now ?? clock())
    }

    /// Counts a failure of `address` (and of `keyID`, when the secret named one).
    func failed(address: String?, keyID: String?, now: ContinuousClock.Instant? = nil) {
        let now = now ?? clock()
        anyFailure.store(true, ordering: .relaxed)
        records.withLock { records in
            for name in [address.map { "a " + $0 }, keyID.map { "k " + $0 }].compactMap({ $0 }) {
                guard records[name] != nil || Self.makeRoom(&records, now: now) else { continue }
                var record = records[name, default: Record()]
                record.failures += 1
                if record.failures > allowance {
                    let exponent = min(record.failures - allowance - 1, 16)
                    record.until = now + min(.seconds(1 << exponent), Self.longest)
                    anyBackoff.store(true, ordering: .relaxed)
                }
                records[name] = record
            }
        }
    }

    /// Ends the count of an address that authenticated.
    func succeeded(address: @autoclosure () -> String?) {
        guard anyFailure.load(ordering: .relaxed), let address = address() else { return }
        records.withLock { _ = $0.removeValue(forKey: "a " + address) }
    }

    private func wait(_ name: String, now: ContinuousClock.Instant) -> Duration? {
        records.withLock { records in
            guard let until = records[name]?.until, until > now else { return nil }
            return until - now
        }
    }

    /// Drops records whose backoff ended when the table is full; whether there is room now.
    private static func makeRoom(_ records: inout [String: Record], now: ContinuousClock.Instant) -> Bool {
        guard records.count >= capacity else { return true }
        records = records.filter { $0.value.until.map { $0 > now } ?? false }
        return records.count < capacity
    }
}
