import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What one HTTP exchange of the SDK may cost: how many body bytes an answer may bring (decided
/// from its head, before any body byte is read), and how long the bytes may take.
public struct TransferLimits: Sendable {
    /// Sees the answer's status and headers before its body and returns how many body bytes may
    /// follow; throwing refuses the answer, and the transfer ends at once with that error.
    public var body: @Sendable (HTTPURLResponse) throws -> Int
    /// The longest time without a new byte (the head counts as one) before the transfer fails
    /// with ``TransferStalled``.
    public var stallTimeout: Duration
    /// The least average rate of body bytes over a sliding window from the response head on; a
    /// slower transfer fails with ``TransferTooSlow``.
    public var minimumRate: TransferRate?
    /// The networks the transfer may use; a transport that can tell the system (`URLSession` on
    /// Apple platforms) sets them on the request, so the system stops the transfer rather than
    /// move it onto another network.
    public var network = NetworkAccess.any

    /// Limits whose body limit depends on the answer.
    public init(
        stallTimeout: Duration = .seconds(60), minimumRate: TransferRate? = nil,
        body: @escaping @Sendable (HTTPURLResponse) throws -> Int
    ) {
        self.body = body
        self.stallTimeout = stallTimeout
        self.minimumRate = minimumRate
    }

    /// How often a transport's watchdog asks ``Pace`` about these limits: a tenth of the shortest
    /// one (the stall timeout or the rate's window), at least 10 ms.
    var watchdogTick: Duration {
        max(min(stallTimeout, minimumRate?.window ?? stallTimeout) / 10, .milliseconds(10))
    }

    /// Limits with one body limit for every answer.
    public init(maximumBytes: Int, stallTimeout: Duration = .seconds(60), minimumRate: TransferRate? = nil) {
        self.init(stallTimeout: stallTimeout, minimumRate: minimumRate) { _ in maximumBytes }
    }
}

/// A minimum transfer rate: at least `bytesPerSecond` on average over each `window`.
public struct TransferRate: Sendable, Hashable {
    /// Bytes per second.
    public var bytesPerSecond: Int
    /// How long the average is taken over; the first window starts with the request.
    public var window: Duration

    /// Creates a rate.
    public init(bytesPerSecond: Int, window: Duration) {
        self.bytesPerSecond = bytesPerSecond
        self.window = window
    }

    /// The bytes a window must bring.
    var bytesPerWindow: Int {
        Int(window.seconds * Double(bytesPerSecond))
    }
}

/// A response body went past the limit of its request; reading stopped there.
public struct TransferLimitExceeded: Error, Sendable {
    /// The limit, in bytes.
    public let limit: Int
}

/// No byte arrived for the stall timeout; the transfer was cancelled.
public struct TransferStalled: Error, Sendable {
    /// The timeout.
    public let timeout: Duration
    /// Body bytes received before the stall.
    public let received: Int
}

/// Bytes arrived more slowly than the minimum rate; the transfer was cancelled.
public struct TransferTooSlow: Error, Sendable {
    /// The rate asked for.
    public let minimum: TransferRate
    /// Body bytes received in the last window.
    public let receivedInWindow: Int
}
