import NIOCore
import NIOPosix

/// Answers manifests and blob downloads straight from the connection's bytes, first in the
/// pipeline, when ``FastPaths`` can answer from memory: no HTTP/1 decoder, no request task, no
/// router; manifests go out as one buffer, blobs with `sendfile` (a `FileRegion`, the file
/// opened on NIO's thread pool, never on the event loop).
///
/// Outcome batches (`POST /v1/models/{name}/events` with a small `Content-Length` body) are read
/// here once their body has arrived, checked by ``FastPaths/outcomeBatch(_:body:from:verified:)``
/// and answered once ``ExperimentService`` has committed them; what arrives meanwhile waits here.
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

    private let paths: FastPaths
    private var connection = FastPathConnection()
    /// The quiesce event held while a batch is written.
    private var heldQuiesce: Any?
    /// The key this connection authenticated with.
    private var verified: FastPaths.VerifiedKey?
    /// The client's IP address, formatted once per connection and only once the throttle
    /// needs it (after some authentication failed).
    private var clientAddress: String??
    /// The last answer's bytes: once written, the next answer is encoded into the same memory.
    private var answerBuffer = ByteBuffer()
    /// The largest answer buffer kept for the next answer, so an idle connection holds at most
    /// this much (a `304`'s head takes a few hundred bytes).
    private static let keptAnswerCapacity = 2048

    init(paths: FastPaths) { self.paths = paths }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        connection.receive(unwrapInboundIn(data))
        drive(context, duringRead: true)
    }

    /// The handlers further on see a read's end only once they have seen reads.
    func channelReadComplete(context: ChannelHandlerContext) {
        if connection.readComplete() { context.fireChannelReadComplete() }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, connection.mode == .answering { drive(context, duringRead: false) }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.closed()
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else { return context.fireUserInboundEventTriggered(event) }
        guard connection.quiesce() else {
            heldQuiesce = event
            return
        }
        quiesce(context, event)
    }

    func read(context: ChannelHandlerContext) {
        if connection.read() { context.read() }
    }

    /// Every request goes to the router from now on; the quiesce event goes on once every answer
    /// sent here is out.
    private func quiesce(_ context: ChannelHandlerContext, _ event: Any) {
        drive(context, duringRead: false)
        // Writes complete in order: once this empty one has, every answer sent here is out.
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(ByteBuffer())), promise: written)
        written.futureResult.assumeIsolated().whenComplete { _ in context.fireUserInboundEventTriggered(event) }
    }

    /// The router's answer to the request handed to it went out: the connection is answered here again.
    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        context.triggerUserOutboundEvent(event, promise: promise)
        guard let event = event as? ConnectionGuard.Event, case .answerWritten = event, connection.routerAnswered() else { return }
        // Not inside the router's write: once it has returned.
        context.eventLoop.assumeIsolated().execute { [self] in drive(context, duringRead: false) }
    }

    /// Does what the connection's state says until it says wait: hands bytes on, and answers the
    /// complete requests received until one goes to the router, a file is being opened or sent, a
    /// batch written, or the channel is not writable.
    private func drive(_ context: ChannelHandlerContext, duringRead: Bool) {
        var answered = false
        defer { if answered { context.flush() } }
        while true {
            switch connection.next(writable: context.channel.isWritable, duringRead: duringRead) {
            case .wait:
                return
            case .handOn(let bytes, let readComplete):
                context.fireChannelRead(wrapInboundOut(bytes))
                if readComplete { context.fireChannelReadComplete() }
            case .look(let bytes):
                guard look(at: bytes, context, answered: &answered) else { return }
            }
        }
    }

    /// Answers the request at the front of `bytes`, or gives it to the router: `true` to look at
    /// what follows; `false` while more bytes, a file being opened or a batch being written are
    /// waited for (their completions drive the connection again).
    private func look(at bytes: ByteBuffer, _ context: ChannelHandlerContext, answered: inout Bool) -> Bool {
        switch FastPathRequestHead.parse(bytes) {
        case .incomplete:
            return false
        case .other:
            connection.pass()
        case .routed(let length):
            connection.hand(length)
        case .posted(let request, let head, let length):
            guard FastPaths.isOutcomeBatch(request.path) else {
                connection.hand(length)
                return true
            }
            // The connection's guard times the body (and the batch's write) as a body, not a head.
            context.triggerUserOutboundEvent(ConnectionGuard.Event.headReceived, promise: nil)
            guard bytes.readableBytes >= length else { return false }
            let start = ContinuousClock.now
            let body = bytes.getSlice(at: bytes.readerIndex + head, length: length - head) ?? ByteBuffer()
            guard let submission = paths.outcomeBatch(request, body: body, from: address(context), verified: &verified) else {
                connection.hand(length)
                return true
            }
            write(submission, path: request.path, length: length, start: start, context)
            return false
        case .request(let request, let length):
            let start = ContinuousClock.now
            guard let (answer, route, key) = paths.answer(request, from: address(context), verified: &verified) else {
                connection.hand(length)
                return true
            }
            if let (path, identity, _, _, _) = answer.file {
                openThenSend(path, identity, answer, target: request.path, length: length, route: route, key: key, start: start, context)
                return false
            }
            respond(context, answer, file: nil, consuming: length)
            answered = true
            paths.log(path: request.path, method: "GET", route: route, status: Int(answer.status.code), start: start, key: key)
        }
        return true
    }

    /// Has ``ExperimentService`` apply a checked batch, then answers it; a batch the catalog refused
    /// (or failed to write) goes to the router, which finds the same and answers why. Only the
    /// request's target is kept meanwhile (for its log line), not the bytes its fields lie in.
    private func write(
        _ submission: OutcomeSubmission, path: String, length: Int, start: ContinuousClock.Instant,
        _ context: ChannelHandlerContext
    ) {
        connection.begin(.batch)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        paths.submit(submission, on: context.eventLoop) { answer in
            let (handler, context) = bound.value
            handler.written(answer, of: submission, path: path, length: length, start: start, context)
        }
    }

    /// Answers a batch ``write(_:path:length:start:_:)`` had applied, on the event loop.
    private func written(
        _ answer: FastPathAnswer?, of submission: OutcomeSubmission, path: String, length: Int,
        start: ContinuousClock.Instant, _ context: ChannelHandlerContext
    ) {
        let held = connection.batchDone()
        guard context.channel.isActive, connection.mode == .answering else { return }
        if let answer {
            respond(context, answer, file: nil, consuming: length)
            context.flush()
            paths.log(
                path: path, method: "POST", route: ExperimentController.eventsRoute, status: Int(answer.status.code), start: start,
                key: submission.key)
        } else {
            connection.hand(length)
        }
        if held.quiesce, let event = heldQuiesce {
            heldQuiesce = nil
            _ = connection.quiesce()
            quiesce(context, event)
        } else {
            drive(context, duringRead: false)
        }
        if held.read { context.read() }
    }

    private func address(_ context: ChannelHandlerContext) -> String? {
        if let clientAddress { return clientAddress }
        let address = context.channel.remoteAddress?.ipAddress
        clientAddress = .some(address)
        return address
    }

    /// Opens the answer's file on NIO's thread pool, then sends it. A file missing or changed
    /// since the index was loaded sends the request to the router, which answers the error.
    private func openThenSend(
        _ path: String, _ identity: FileIdentity?, _ answer: FastPathAnswer, target: String, length: Int,
        route: String, key: String, start: ContinuousClock.Instant, _ context: ChannelHandlerContext
    ) {
        connection.begin(.file)
        let opened = NIOThreadPool.singleton.runIfActive(eventLoop: context.eventLoop) { () -> NIOFileHandle? in
            guard let handle = try? NIOFileHandle(_deprecatedPath: path) else { return nil }
            guard let identity, (try? handle.withUnsafeFileDescriptor { FileIdentity(descriptor: $0) }) == identity else {
                try? handle.close()
                return nil
            }
            return handle
        }
        opened.assumeIsolated().whenComplete { [self] result in
            connection.fileDone()
            let file = try? result.get()
            guard context.channel.isActive, connection.mode == .answering else {
                try? file?.close()
                return
            }
            guard let file else {
                connection.hand(length)
                return drive(context, duringRead: false)
            }
            respond(context, answer, file: file, consuming: length)
            context.flush()
            paths.log(path: target, method: "GET", route: route, status: Int(answer.status.code), start: start, key: key)
        }
    }

    /// Takes the first `length` bytes received as the request being answered, and writes its answer.
    private func respond(_ context: ChannelHandlerContext, _ answer: FastPathAnswer, file: NIOFileHandle?, consuming length: Int) {
        connection.consume(length)
        FastPathAnswerEncoder.encode(answer, into: &answerBuffer)
        context.write(wrapOutboundOut(.byteBuffer(answerBuffer)), promise: nil)
        // A large answer's buffer is not kept for the connection's next one.
        if answerBuffer.capacity > Self.keptAnswerCapacity { answerBuffer = ByteBuffer() }
        defer { context.triggerUserOutboundEvent(ConnectionGuard.Event.answered, promise: nil) }
        guard let file, let range = answer.file?.range else { return }
        connection.begin(.file)
        answer.file?.onStart()
        let sent = context.eventLoop.makePromise(of: Void.self)
        context.write(
            wrapOutboundOut(.fileRegion(FileRegion(fileHandle: file, readerIndex: range.lowerBound, endIndex: range.upperBound + 1))),
            promise: sent)
        sent.futureResult.assumeIsolated().whenComplete { [self] result in
            try? file.close()
            if case .success = result { answer.file?.onComplete() }
            connection.fileDone()
            if connection.mode == .answering { drive(context, duringRead: false) }
        }
    }
}
