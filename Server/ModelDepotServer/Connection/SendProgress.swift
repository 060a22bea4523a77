import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// What the kernel knows of a connection's sending: the bytes the client acknowledged so far,
/// and whether any are still waiting (sent and unacknowledged, or not sent yet). Read from
/// Linux's `TCP_INFO`, whose fields past Glibc's `struct tcp_info` (`tcpi_bytes_acked`,
/// `tcpi_notsent_bytes`) are read at their offsets in the kernel's `struct tcp_info`.
struct SendProgress: Equatable {
    var acknowledged: UInt64
    var waiting: Bool

    /// The first 152 bytes of the kernel's `struct tcp_info`.
    private struct Raw: Sendable {
        var words:
            (
                UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    }

    /// Reads the progress of `channel`'s socket, or `nil` where the kernel does not tell.
    static func read(_ channel: any Channel) -> EventLoopFuture<SendProgress?> {
        #if os(Linux)
            guard let provider = channel as? SocketOptionProvider else { return channel.eventLoop.makeSucceededFuture(nil) }
            let raw: EventLoopFuture<Raw> = provider.unsafeGetSocketOption(
                level: SocketOptionLevel(IPPROTO_TCP), name: SocketOptionName(TCP_INFO))
            return raw.map { raw in
                withUnsafeBytes(of: raw.words) { bytes in
                    let unacknowledged = bytes.load(fromByteOffset: 24, as: UInt32.self)
                    let acknowledged = bytes.load(fromByteOffset: 120, as: UInt64.self)
                    let notSent = bytes.load(fromByteOffset: 144, as: UInt32.self)
                    return SendProgress(acknowledged: acknowledged, waiting: unacknowledged > 0 || notSent > 0)
                }
            }.recover { _ in nil }
        #else
            return channel.eventLoop.makeSucceededFuture(nil)
        #endif
    }
}
