import Hummingbird
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOPosix

/// Answers manifests and blob downloads on the connection's event loop, before Hummingbird's
/// per-request task, when ``HotPaths`` can answer from caches: no task, no router, and blobs go
/// out with `sendfile` (a `FileRegion` written straight to NIO's HTTP/1 encoder). Every other
/// request, and any request while an earlier one on the connection is still being answered by
/// the router (so pipelined answers keep their order), goes on to the router unchanged.
///
/// Graceful shutdown: Hummingbird's connection-state handler (after this one) closes a
/// connection it believes idle when the server quiesces. It never sees the answers sent here, so
/// the quiesce event is held back until they are written, and once the server quiesces every
/// request goes to the router, which closes the connection after its answer.
final class HotPathHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private enum State {
        case idle
        case passing
        case answering(HotAnswer, file: NIOFileHandle?, request: HTTPRequest, route: String, key: String, start: ContinuousClock.Instant)
    }

    private let paths: HotPaths
    private var state = State.idle
    /// Requests handed to the router whose response has not ended yet.
    private var unanswered = 0
    /// Answers written here whose bytes have not all gone out yet.
    private var sending = 0
    /// The server is shutting down: everything goes to the router.
    private var quiescing = false
    /// The quiesce event, held back while answers are being sent.
    private var heldQuiesce: Any?
    /// The HTTPTypes-to-HTTP/1 codec's context: writing from it reaches NIO's encoder directly,
    /// which takes a `FileRegion` body.
    private var encoder: ChannelHandlerContext?

    init(paths: HotPaths) { self.paths = paths }

    func handlerAdded(context: ChannelHandlerContext) {
        encoder = try? context.pipeline.syncOperations.context(handlerType: HTTP1ToHTTPServerCodec.self)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            let start = ContinuousClock.now
            if !quiescing, unanswered == 0, request.headerFields[.connection] == nil, let (answer, route, key) = paths.answer(request) {
                if let file = answer.file {
                    guard encoder != nil, let handle = try? NIOFileHandle(_deprecatedPath: file.path) else { return pass(context, data) }
                    state = .answering(answer, file: handle, request: request, route: route, key: key, start: start)
                } else {
                    state = .answering(answer, file: nil, request: request, route: route, key: key, start: start)
                }
                return
            }
            pass(context, data)
        case .body:
            if case .answering = state { return }
            context.fireChannelRead(data)
        case .end:
            guard case .answering(let answer, let file, let request, let route, let key, let start) = state else {
                state = .idle
                return context.fireChannelRead(data)
            }
            state = .idle
            respond(context, answer, file: file)
            paths.log(request, route: route, status: Int(answer.status.code), start: start, key: key)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        abandon()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        abandon()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else { return context.fireUserInboundEventTriggered(event) }
        quiescing = true
        if case .answering = state {
            heldQuiesce = event
        } else if sending > 0 {
            heldQuiesce = event
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { unanswered -= 1 }
        context.write(data, promise: promise)
    }

    /// Closes the file of a request whose end never came (the client went away).
    private func abandon() {
        if case .answering(_, let file?, _, _, _, _) = state { try? file.close() }
        state = .idle
    }

    private func pass(_ context: ChannelHandlerContext, _ data: NIOAny) {
        state = .passing
        unanswered += 1
        context.fireChannelRead(data)
    }

    private func respond(_ context: ChannelHandlerContext, _ answer: HotAnswer, file: NIOFileHandle?) {
        var headers = answer.headers
        headers[.date] = HTTPDate.now()
        headers[.server] = "ModelDepot"
        answer.file?.onStart()
        let sent = context.eventLoop.makePromise(of: Void.self)
        sending += 1
        sent.futureResult.assumeIsolated().whenComplete { [self] result in
            try? file?.close()
            if case .success = result { answer.file?.onComplete() }
            sending -= 1
            if sending == 0, let event = heldQuiesce {
                heldQuiesce = nil
                context.fireUserInboundEventTriggered(event)
            }
        }
        guard let file, let range = answer.file?.range, let encoder else {
            context.write(wrapOutboundOut(.head(HTTPResponse(status: answer.status, headerFields: headers))), promise: nil)
            if let body = answer.body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: sent)
            return
        }
        var head = HTTPResponseHead(version: .http1_1, status: .init(statusCode: Int(answer.status.code)))
        for field in headers { head.headers.add(name: field.name.rawName, value: field.value) }
        let region = FileRegion(fileHandle: file, readerIndex: range.lowerBound, endIndex: range.upperBound + 1)
        encoder.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        encoder.write(NIOAny(HTTPServerResponsePart.body(.fileRegion(region))), promise: nil)
        encoder.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: sent)
    }
}
