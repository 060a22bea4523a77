import ModelDepotShared
import Synchronization

/// Failed authentications, counted per client address (an IPv6 address per /64, which one client
/// usually holds whole) and per key id, with exponential backoff.
///
/// - An address that fails `allowance` times in a row is refused with `429` for 1 s, then 2 s,
///   4 s… up to ``longest`` after each further failure — but only for what can be guessed: a
///   valid generated secret (`depot_…`, 256 random bits) is never refused for its address, so a
///   fleet behind one carrier NAT keeps working while someone there guesses.
/// - Failures are counted apart for the admin API and the console (``Scope/admin``) and for the
///   device routes (``Scope/device``); a secret not of the generated form can only be an
///   operator's admin token and counts as admin wherever it is sent. Only an admin key's success
///   ends an address's admin count, so devices succeeding from the same NAT cannot keep resetting
///   a guesser's count.
/// - A key id (the one a generated secret names) that gets `allowance` wrong secrets is throttled
///   the same way, but only for wrong secrets: its right secret still works, so nobody can lock a
///   fleet's app key out by sending guesses that name its id.
/// - The table is bounded (``capacity``, 100,000 by default). Full, it stops counting new device addresses (failing
///   open: devices keep working) but refuses admin attempts from addresses it holds no record of
///   (failing closed: a flood of addresses cannot open the admin API to unthrottled guessing).
final class AuthenticationThrottle: Sendable {
    /// Where a failure counts: the routes it was made on.
    enum Scope: String, Sendable {
        /// The admin API (`/v1/admin/…`) and the console.
        case admin = "A"
        /// Every other route (manifests, blobs, outcome events, root documents).
        case device = "D"
    }

    /// The longest backoff.
    static let longest: Duration = .seconds(300)
    /// Records kept at most by default (addresses and key ids); beyond it, records whose backoff
    /// ended are dropped first, and new ones are not counted while none can be.
    static let defaultCapacity = 100_000

    private struct Record {
        var failures = 0
        var until: ContinuousClock.Instant?
    }

    /// Consecutive failures allowed before the backoff starts.
    let allowance: Int
    /// Records kept at most.
    let capacity: Int
    private let records = Mutex<[String: Record]>([:])
    /// Whether any failure, or any backoff, was ever recorded: until then the checks on every
    /// request skip the table (and need no address).
    private let anyFailure = Atomic<Bool>(false)
    private let anyBackoff = Atomic<Bool>(false)
    /// Whether the table was ever full at a failure (it may have room again): until then the
    /// admin checks skip the table too.
    private let full = Atomic<Bool>(false)

    /// The clock backoffs are measured on (tests hold it still).
    private let clock: @Sendable () -> ContinuousClock.Instant

    init(
        allowance: Int, capacity: Int = AuthenticationThrottle.defaultCapacity,
        clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.allowance = allowance
        self.capacity = capacity
        self.clock = clock
    }

    /// How long `address` must wait before it may try a secret in `scope` again, or `nil`; while
    /// the table is full, an admin attempt from an address it holds no record of waits 1 s.
    func wait(address: @autoclosure () -> String?, scope: Scope, now: ContinuousClock.Instant? = nil) -> Duration? {
        let (backoff, full) = (anyBackoff.load(ordering: .relaxed), full.load(ordering: .relaxed))
        guard backoff || (full && scope == .admin), let address = address() else { return nil }
        let name = Self.name(address, scope)
        let now = now ?? clock()
        return records.withLock { records in
            if let until = records[name]?.until, until > now { return until - now }
            guard scope == .admin, records[name] == nil else { return nil }
            return Self.makeRoom(&records, capacity: capacity, now: now) ? nil : .seconds(1)
        }
    }

    /// How long wrong secrets naming `keyID` are refused, or `nil`.
    func wait(keyID: String, now: ContinuousClock.Instant? = nil) -> Duration? {
        guard anyBackoff.load(ordering: .relaxed) else { return nil }
        return wait("k " + keyID, now: now ?? clock())
    }

    /// Counts a failure of `address` in `scope` (and of `keyID`, when the secret named one).
    func failed(address: String?, keyID: String?, scope: Scope, now: ContinuousClock.Instant? = nil) {
        let now = now ?? clock()
        anyFailure.store(true, ordering: .relaxed)
        records.withLock { records in
            for name in [address.map { Self.name($0, scope) }, keyID.map { "k " + $0 }].compactMap({ $0 }) {
                guard records[name] != nil || Self.makeRoom(&records, capacity: capacity, now: now) else {
                    full.store(true, ordering: .relaxed)
                    continue
                }
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

    /// Ends the counts of an address that authenticated with a key of `kind`: an app key's ends
    /// its device count, an admin key's both.
    func succeeded(address: @autoclosure () -> String?, kind: AccessKey.Kind) {
        guard anyFailure.load(ordering: .relaxed), let address = address() else { return }
        records.withLock { records in
            records[Self.name(address, .device)] = nil
            if kind == .admin { records[Self.name(address, .admin)] = nil }
        }
    }

    /// A record's name: the scope and the address, an IPv6 address as its /64.
    private static func name(_ address: String, _ scope: Scope) -> String {
        guard let bytes = AddressRange.bytes(address), bytes.count == 16 else { return scope.rawValue + " " + address }
        return scope.rawValue + " " + bytes.prefix(8).hex + "/64"
    }

    private func wait(_ name: String, now: ContinuousClock.Instant) -> Duration? {
        records.withLock { records in
            guard let until = records[name]?.until, until > now else { return nil }
            return until - now
        }
    }

    /// Drops records whose backoff ended when the table is full; whether there is room now.
    private static func makeRoom(_ records: inout [String: Record], capacity: Int, now: ContinuousClock.Instant) -> Bool {
        guard records.count >= capacity else { return true }
        records = records.filter { $0.value.until.map { $0 > now } ?? false }
        return records.count < capacity
    }
}
