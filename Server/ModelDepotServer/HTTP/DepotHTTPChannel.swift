import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Hummingbird's HTTP/1 child channel (the same pipeline as its `HTTP1Channel`) with a deeper
/// inbound buffer, so that the task hashing a streamed upload rarely waits for the event loop,
/// and ``HotPathHandler`` first in the pipeline, before the HTTP/1 decoder.
struct DepotHTTPChannel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    let responder: HTTPChannelHandler.Responder
    let hotPaths: HotPaths

    /// Inbound parts (request heads and body pieces of at most 64 KiB) buffered per connection
    /// before NIO stops reading: at most 8 MiB, so an upload's hashing rarely waits for the
    /// event loop. NIO's default, 10, made the hashing task wait on every few pieces.
    static let highWatermark = 128
    static let lowWatermark = 32

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let options = channel.pipeline.syncOperations
            try options.addHandler(HotPathHandler(paths: hotPaths))
            try options.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false,
                                                    withOutboundHeaderValidation: false, withEncoderConfiguration: .init(),
                                                    withDecoderLimitConfiguration: .init())
            try options.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            try options.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
            return try NIOAsyncChannel(
                wrappingChannelSynchronously: channel,
                configuration: .init(backPressureStrategy: .init(lowWatermark: Self.lowWatermark, highWatermark: Self.highWatermark),
                                     isOutboundHalfClosureEnabled: true)
            )
        }
    }

    func handle(value asyncChannel: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: asyncChannel, logger: logger)
    }
}
