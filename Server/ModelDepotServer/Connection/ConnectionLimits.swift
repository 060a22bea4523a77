import Synchronization

/// How long a connection may take and how many may be open: nginx's defaults
/// (`client_header_timeout`, `keepalive_timeout`, `client_body_timeout`, `send_timeout`).
public struct ConnectionLimits: Sendable, Equatable {
    /// From a request head's first byte to its last.
    public var headTimeout: Duration = .seconds(60)
    /// Between requests on a keep-alive connection.
    public var idleTimeout: Duration = .seconds(75)
    /// Between two reads of a request body.
    public var bodyTimeout: Duration = .seconds(60)
    /// Without the client acknowledging any byte of an answer it was sent.
    public var sendTimeout: Duration = .seconds(60)
    /// Open connections; one more is answered `503` and closed.
    public var maximumConnections = 10_000
    /// The largest request head (request line and fields) in bytes; a larger one is answered `431`.
    public var maximumHeadSize = 16 * 1024

    public init() {}

    /// How often a connection checks its deadlines: an eighth of the shortest timeout, so a
    /// timeout fires at most that late.
    var checkInterval: Duration {
        min(headTimeout, idleTimeout, bodyTimeout, sendTimeout) / 8
    }
}

/// The connections open on one server, for ``ConnectionLimits/maximumConnections``.
final class ConnectionCounter: Sendable {
    private let open = Atomic<Int>(0)

    /// Counts a new connection; whether it is within the maximum.
    func add(maximum: Int) -> Bool {
        open.add(1, ordering: .relaxed).newValue <= maximum
    }

    func remove() { open.subtract(1, ordering: .relaxed) }
}
