import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Hummingbird's HTTP/1 child channel (the same pipeline as its `HTTP1Channel`, with its decoder
/// limits) with larger reads and a deeper inbound buffer, so that the task receiving a streamed
/// upload rarely waits for the event loop, ``ConnectionGuard`` first in the pipeline (timeouts,
/// limits), then ``FastPathHandler`` before the HTTP/1 decoder. `HTTP1Channel` cannot be used as it
/// is: its configuration adds handlers only after the decoder, and sets neither the read size nor
/// the inbound buffer.
struct DepotHTTPChannel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    let responder: HTTPChannelHandler.Responder
    let fastPaths: FastPaths
    let limits: ConnectionLimits
    let counter: ConnectionCounter

    /// Inbound parts (request heads and body pieces of at most ``largestRead``) buffered per
    /// connection before NIO stops reading: at most 8 MiB, so the task receiving an upload rarely
    /// waits for the event loop. NIO's default, 10 parts of 64 KiB, made it wait on every few
    /// pieces.
    static let highWatermark = 8
    static let lowWatermark = 2
    /// The largest read from a connection. Reads grow towards it only while they fill their
    /// buffer, as an upload's do: a 1 GB upload takes about 1,500 reads instead of NIO's 15,000 of
    /// 64 KiB, and 1.2 s of the server's CPU instead of 1.6 s; a request head still takes a buffer
    /// of about 2 KiB.
    static let largestRead = 1 << 20
    /// Hummingbird's decoder limits (80 KiB a field and in all, 1,000 fields); NIO's own default
    /// allows 65,534 fields.
    static let decoderLimits: NIOHTTPDecoderLimitConfiguration = {
        let hummingbird = HTTP1Channel.Configuration.DecoderConfiguration()
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderFieldSize = hummingbird.maxHeaderFieldSize
        limits.maxHeaderListSize = hummingbird.maxHeaderListSize
        limits.maxHeaderFieldCount = hummingbird.maxHeaderFieldCount
        return limits
    }()

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.syncOptions?.setOption(
                ChannelOptions.recvAllocator,
                value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: Self.largestRead))
            let options = channel.pipeline.syncOperations
            try options.addHandler(ConnectionGuard(limits: limits, counter: counter, metrics: fastPaths.metrics))
            try options.addHandler(FastPathHandler(paths: fastPaths))
            try options.configureHTTPServerPipeline(
                withPipeliningAssistance: false, withErrorHandling: false,
                withOutboundHeaderValidation: false, withEncoderConfiguration: .init(),
                withDecoderLimitConfiguration: Self.decoderLimits)
            try options.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            try options.addHandler(RequestProgressReporter())
            try options.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
            return try NIOAsyncChannel(
                wrappingChannelSynchronously: channel,
                configuration: .init(
                    backPressureStrategy: .init(lowWatermark: Self.lowWatermark, highWatermark: Self.highWatermark),
                    isOutboundHalfClosureEnabled: true)
            )
        }
    }

    func handle(value asyncChannel: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: asyncChannel, logger: logger)
    }
}
