import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Tells ``ConnectionGuard`` where the router's requests begin and end: after the HTTP/1
/// decoder, it turns request and response parts into ``ConnectionGuard/Event``s, and a request
/// the decoder cannot read into ``ConnectionGuard/Event/malformed`` (a JSON `400`, then close).
final class RequestProgressReporter: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: context.triggerUserOutboundEvent(ConnectionGuard.Event.headReceived, promise: nil)
        case .end: context.triggerUserOutboundEvent(ConnectionGuard.Event.requestReceived, promise: nil)
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? HTTPParserError else { return context.fireErrorCaught(error) }
        context.triggerUserOutboundEvent(ConnectionGuard.Event.malformed("\(error)"), promise: nil)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let isEnd: Bool
        if case .end = unwrapOutboundIn(data) { isEnd = true } else { isEnd = false }
        context.write(data, promise: promise)
        if isEnd { context.triggerUserOutboundEvent(ConnectionGuard.Event.answerWritten, promise: nil) }
    }
}
