import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Tells ``ConnectionGuard`` where the router's requests begin and end: after the HTTP/1
/// decoder, it turns request and response parts into ``ConnectionGuard/Event``s, and a request
/// the decoder cannot read into ``ConnectionGuard/Event/malformed`` (a JSON `400`, then close).
/// It also closes the connection after an answer that says `Connection: close`, and keeps the
/// trailer fields that ended a request's chunked body, which Hummingbird's request drops
/// (``AppRequestContext/requestTrailers()`` reads them).
final class RequestProgressReporter: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// The trailer fields of each request read whole and not answered yet, oldest first: the
    /// router answers in order, and reads ahead of its answers when requests are pipelined.
    private var unansweredTrailers: [HTTPFields?] = []
    /// Answers written before their request's body ended (a 401 to an upload).
    private var answeredEarly = 0

    /// The trailer fields of the oldest request not answered yet: the one the router is answering.
    var trailers: HTTPFields? { unansweredTrailers.first ?? nil }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            context.triggerUserOutboundEvent(ConnectionGuard.Event.headReceived, promise: nil)
        case .end(let fields):
            if answeredEarly > 0 { answeredEarly -= 1 } else { unansweredTrailers.append(fields) }
            context.triggerUserOutboundEvent(ConnectionGuard.Event.requestReceived, promise: nil)
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? HTTPParserError else { return context.fireErrorCaught(error) }
        let event = error == .headerOverflow ? ConnectionGuard.Event.tooManyFields : .malformed("\(error)")
        context.triggerUserOutboundEvent(event, promise: nil)
    }

    /// The answer being written says `Connection: close`.
    private var closeAfterAnswer = false

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            closeAfterAnswer = head.headerFields[.connection]?.lowercased() == "close"
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            if unansweredTrailers.isEmpty { answeredEarly += 1 } else { unansweredTrailers.removeFirst() }
            guard closeAfterAnswer else {
                context.write(data, promise: promise)
                return context.triggerUserOutboundEvent(ConnectionGuard.Event.answerWritten, promise: nil)
            }
            // Hummingbird would go on reading (and discarding) the request's body before it
            // closes; an answer that says close is the last, whatever the client still sends.
            let written = context.eventLoop.makePromise(of: Void.self)
            if let promise { written.futureResult.cascade(to: promise) }
            context.writeAndFlush(data, promise: written)
            written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }
}
