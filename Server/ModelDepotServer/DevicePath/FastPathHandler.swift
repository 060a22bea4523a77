import NIOCore
import NIOPosix

/// Answers manifests and blob downloads straight from the connection's bytes, first in the
/// pipeline, when ``FastPaths`` can answer from memory: no HTTP/1 decoder, no request task, no
/// router; manifests go out as one buffer, blobs with `sendfile` (a `FileRegion`, the file
/// opened on NIO's thread pool, never on the event loop).
///
/// Outcome batches (`POST /v1/models/{name}/events` with a small `Content-Length` body) are read
/// here once their body has arrived, checked by ``FastPaths/outcomeBatch(_:body:from:verified:)``
/// and answered once ``OutcomeWriter`` has committed them; what arrives meanwhile waits here.
///
/// Requests are read with ``FastPathRequestHead``. A plain `GET` or outcome batch that ``FastPaths``
/// does not answer (it needs a load, or is an error, which the router answers with its reason),
/// and a request of another method with no body or a small `Content-Length` one (its body goes on
/// as it arrives, so an early answer such as a `401` still comes before the body), goes alone to
/// NIO's HTTP/1 decoder and the router; what arrives after it waits here until the router's answer is written
/// (``RequestProgressReporter`` reports it), then the connection is answered here again. Any other
/// request (a chunked or large body, an upgrade, a malformed head) goes to the decoder with
/// everything after it, and the connection stays with the router. Either way, pipelined answers
/// keep their order.
///
/// One file is sent, or one batch written, at a time, and nothing more is answered while the channel is not writable;
/// meanwhile requests wait here, up to ``FastPathRequestHead/maxLength`` bytes, then go to the router.
///
/// Graceful shutdown: Hummingbird's connection-state handler (further on) closes a connection it
/// believes idle when the server quiesces. It never sees the answers sent here, so the quiesce
/// event is held back until they are written (and a batch being written is answered first), and from then on every request goes to the router,
/// which closes the connection after its answer.
final class FastPathHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// Who answers the connection's next request.
    private enum Mode: Equatable {
        /// This handler, when it can.
        case answering
        /// The router got a request whose body is still arriving: `remaining` more bytes go on to
        /// the decoder as they come; then the connection waits for the router's answer, or is
        /// answered here again when the router `answered` already (before the body).
        case forwardingBody(remaining: Int, answered: Bool)
        /// The router got one request and has not answered it yet; what follows waits here.
        case awaitingRouter
        /// The router, for good.
        case passing
    }

    private let paths: FastPaths
    /// Bytes received and not yet answered or passed on.
    private var received: ByteBuffer?
    private var mode = Mode.answering
    /// A request was handed to the decoder during the current read: its end goes on too.
    private var handedDuringRead = false
    /// A blob is being opened or sent, or an outcome batch written.
    private var busy = false
    /// An outcome batch is being written: its bytes are still the first received, and must not
    /// go to the router (which would apply it again), so nothing is passed on until it is answered.
    private var writingBatch = false
    /// A read the channel asked for while a batch was being written and more than a head's worth
    /// was waiting: done once the batch is answered.
    private var heldRead = false
    /// The server began to quiesce while a batch was being written: handled once it is answered.
    private var heldQuiesce: Any?
    /// The key this connection authenticated with.
    private var verified: FastPaths.VerifiedKey?
    /// The client's IP address, formatted once per connection and only once the throttle
    /// needs it (after some authentication failed).
    private var clientAddress: String??

    init(paths: FastPaths) { self.paths = paths }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard mode != .passing else { return context.fireChannelRead(data) }
        var bytes = unwrapInboundIn(data)
        if received == nil {
            received = bytes
        } else {
            received!.writeBuffer(&bytes)
        }
        switch mode {
        case .answering: answerReceived(context, duringRead: true)
        case .forwardingBody: forwardBody(context, duringRead: true)
        case .awaitingRouter: if received!.readableBytes > FastPathRequestHead.maxLength { pass(context, duringRead: true) }
        case .passing: break
        }
    }

    /// The handlers further on see a read's end only once they have seen reads.
    func channelReadComplete(context: ChannelHandlerContext) {
        guard mode == .passing || handedDuringRead else { return }
        handedDuringRead = false
        context.fireChannelReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, mode == .answering { answerReceived(context, duringRead: false) }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        received = nil
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else { return context.fireUserInboundEventTriggered(event) }
        guard !writingBatch else {
            heldQuiesce = event
            return
        }
        quiesce(context, event)
    }

    /// While a batch is being written, reading stops once more than a head's worth waits behind it.
    func read(context: ChannelHandlerContext) {
        if writingBatch, (received?.readableBytes ?? 0) > FastPathRequestHead.maxLength {
            heldRead = true
            return
        }
        context.read()
    }

    /// From now on every request goes to the router; the quiesce event goes on once every answer
    /// sent here is out.
    private func quiesce(_ context: ChannelHandlerContext, _ event: Any) {
        if mode != .passing { pass(context, duringRead: false) }
        // Writes complete in order: once this empty one has, every answer sent here is out.
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(ByteBuffer())), promise: written)
        written.futureResult.assumeIsolated().whenComplete { _ in context.fireUserInboundEventTriggered(event) }
    }

    /// The router's answer to the request handed to it went out: the connection is answered here again.
    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        context.triggerUserOutboundEvent(event, promise: promise)
        guard let event = event as? ConnectionGuard.Event, case .answerWritten = event else { return }
        if case .forwardingBody(let remaining, _) = mode { mode = .forwardingBody(remaining: remaining, answered: true) }
        guard mode == .awaitingRouter else { return }
        mode = .answering
        // Not inside the router's write: once it has returned.
        context.eventLoop.assumeIsolated().execute { [self] in
            if mode == .answering { answerReceived(context, duringRead: false) }
        }
    }

    /// Answers the complete requests received, until one goes to the router, a file is being
    /// opened or sent, a batch written, or the channel is not writable.
    private func answerReceived(_ context: ChannelHandlerContext, duringRead: Bool) {
        var answered = false
        defer { if answered { context.flush() } }
        while let bytes = received, bytes.readableBytes > 0 {
            guard !busy, context.channel.isWritable else {
                if bytes.readableBytes > FastPathRequestHead.maxLength, !writingBatch { pass(context, duringRead: duringRead) }
                return
            }
            switch FastPathRequestHead.parse(bytes) {
            case .incomplete:
                return
            case .other:
                return pass(context, duringRead: duringRead)
            case .routed(let length):
                return hand(length, context, duringRead: duringRead)
            case .posted(let request, let head, let length):
                guard FastPaths.isOutcomeBatch(request.path) else { return hand(length, context, duringRead: duringRead) }
                // The connection's guard times the body (and the batch's write) as a body, not a head.
                context.triggerUserOutboundEvent(ConnectionGuard.Event.headReceived, promise: nil)
                guard bytes.readableBytes >= length else { return }
                let start = ContinuousClock.now
                let submission = bytes.withUnsafeReadableBytes { all in
                    paths.outcomeBatch(
                        request, body: UnsafeRawBufferPointer(rebasing: all[head..<length]), from: address(context),
                        verified: &verified)
                }
                guard let submission else { return hand(length, context, duringRead: duringRead) }
                return write(submission, request: request, length: length, start: start, context)
            case .request(let request, let length):
                let start = ContinuousClock.now
                guard let (answer, route, key) = paths.answer(request, from: address(context), verified: &verified) else {
                    return hand(length, context, duringRead: duringRead)
                }
                if let (path, identity, _, _, _) = answer.file {
                    return openThenSend(
                        path, identity, answer, request: request, length: length, route: route, key: key, start: start, context)
                }
                consume(length, context)
                respond(context, answer, file: nil)
                answered = true
                paths.log(request, method: "GET", route: route, status: Int(answer.status.code), start: start, key: key)
            }
        }
    }

    /// Has ``OutcomeWriter`` apply a checked batch, then answers it; a batch the catalog refused
    /// (or failed to write) goes to the router, which finds the same and answers why.
    private func write(
        _ submission: OutcomeSubmission, request: FastPathRequest, length: Int, start: ContinuousClock.Instant,
        _ context: ChannelHandlerContext
    ) {
        busy = true
        writingBatch = true
        let bound = NIOLoopBound((self, context, request), eventLoop: context.eventLoop)
        paths.submit(submission, on: context.eventLoop) { answer in
            let (handler, context, request) = bound.value
            handler.written(answer, of: submission, request: request, length: length, start: start, context)
        }
    }

    /// Answers a batch ``write(_:request:length:start:_:)`` had applied, on the event loop.
    private func written(
        _ answer: FastPathAnswer?, of submission: OutcomeSubmission, request: FastPathRequest, length: Int,
        start: ContinuousClock.Instant, _ context: ChannelHandlerContext
    ) {
        (busy, writingBatch) = (false, false)
        guard context.channel.isActive, mode == .answering else { return }
        if let answer {
            consume(length, context)
            respond(context, answer, file: nil)
            context.flush()
            paths.log(
                request, method: "POST", route: ExperimentController.eventsRoute, status: Int(answer.status.code), start: start,
                key: submission.key)
        } else {
            hand(length, context, duringRead: false)
        }
        if let event = heldQuiesce {
            heldQuiesce = nil
            quiesce(context, event)
        } else if mode == .answering {
            answerReceived(context, duringRead: false)
        }
        if heldRead {
            heldRead = false
            context.read()
        }
    }

    private func address(_ context: ChannelHandlerContext) -> String? {
        if let clientAddress { return clientAddress }
        let address = context.channel.remoteAddress?.ipAddress
        clientAddress = .some(address)
        return address
    }

    /// Takes the first `length` bytes received as the request being answered here.
    private func consume(_ length: Int, _ context: ChannelHandlerContext) {
        received?.moveReaderIndex(forwardBy: length)
        if received?.readableBytes == 0 { received = nil }
        context.triggerUserOutboundEvent(ConnectionGuard.Event.requestReceived, promise: nil)
    }

    /// Opens the answer's file on NIO's thread pool, then sends it. A file missing or changed
    /// since the index was loaded sends the request to the router, which answers the error.
    private func openThenSend(
        _ path: String, _ identity: FileIdentity?, _ answer: FastPathAnswer, request: FastPathRequest, length: Int,
        route: String, key: String, start: ContinuousClock.Instant, _ context: ChannelHandlerContext
    ) {
        busy = true
        let opened = NIOThreadPool.singleton.runIfActive(eventLoop: context.eventLoop) { () -> NIOFileHandle? in
            guard let handle = try? NIOFileHandle(_deprecatedPath: path) else { return nil }
            guard let identity, (try? handle.withUnsafeFileDescriptor { FileIdentity(descriptor: $0) }) == identity else {
                try? handle.close()
                return nil
            }
            return handle
        }
        opened.assumeIsolated().whenComplete { [self] result in
            busy = false
            let file = try? result.get()
            guard context.channel.isActive, mode == .answering else {
                try? file?.close()
                return
            }
            guard let file else { return hand(length, context, duringRead: false) }
            consume(length, context)
            respond(context, answer, file: file)
            context.flush()
            paths.log(request, method: "GET", route: route, status: Int(answer.status.code), start: start, key: key)
        }
    }

    /// Hands the first `length` bytes (one request, with its body) to the decoder and the router:
    /// those received now, the rest of its body as it arrives; keeps what follows until the
    /// router has answered.
    private func hand(_ length: Int, _ context: ChannelHandlerContext, duringRead: Bool) {
        mode = .forwardingBody(remaining: length, answered: false)
        forwardBody(context, duringRead: duringRead)
    }

    /// Passes on as much of the request being forwarded as was received.
    private func forwardBody(_ context: ChannelHandlerContext, duringRead: Bool) {
        guard case .forwardingBody(let remaining, let answered) = mode, var bytes = received else { return }
        let count = min(remaining, bytes.readableBytes)
        let part = bytes.readSlice(length: count) ?? ByteBuffer()
        received = bytes.readableBytes > 0 ? bytes : nil
        mode =
            count < remaining ? .forwardingBody(remaining: remaining - count, answered: answered) : answered ? .answering : .awaitingRouter
        context.fireChannelRead(wrapInboundOut(part))
        if duringRead { handedDuringRead = true } else { context.fireChannelReadComplete() }
        if mode == .answering { answerReceived(context, duringRead: duringRead) }
    }

    /// Hands what was received, and everything after it, to the HTTP/1 decoder.
    private func pass(_ context: ChannelHandlerContext, duringRead: Bool) {
        mode = .passing
        guard let bytes = received else { return }
        received = nil
        context.fireChannelRead(wrapInboundOut(bytes))
        if !duringRead { context.fireChannelReadComplete() }
    }

    private func respond(_ context: ChannelHandlerContext, _ answer: FastPathAnswer, file: NIOFileHandle?) {
        context.write(
            wrapOutboundOut(.byteBuffer(FastPathAnswerEncoder.encode(answer, allocator: context.channel.allocator))), promise: nil)
        defer { context.triggerUserOutboundEvent(ConnectionGuard.Event.answerWritten, promise: nil) }
        guard let file, let range = answer.file?.range else { return }
        busy = true
        answer.file?.onStart()
        let sent = context.eventLoop.makePromise(of: Void.self)
        context.write(
            wrapOutboundOut(.fileRegion(FileRegion(fileHandle: file, readerIndex: range.lowerBound, endIndex: range.upperBound + 1))),
            promise: sent)
        sent.futureResult.assumeIsolated().whenComplete { [self] result in
            try? file.close()
            if case .success = result { answer.file?.onComplete() }
            busy = false
            if mode == .answering { answerReceived(context, duringRead: false) }
        }
    }
}
