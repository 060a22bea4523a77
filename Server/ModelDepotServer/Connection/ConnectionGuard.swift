import ModelDepotShared
import NIOCore

/// First in every connection's pipeline, on its raw bytes: enforces ``ConnectionLimits``.
///
/// - More open connections than allowed: the new one gets `503` and is closed.
/// - A connection accepted as the server began to shut down is closed before it becomes active.
/// - A request head not complete within the head timeout: `408`, then the connection closes; a
///   head longer than allowed: `431`, then it closes.
/// - No byte of a request body within the body timeout, no request within the idle timeout
///   while nothing is being answered, or an answer of which the client acknowledges no byte
///   within the send timeout: the connection closes.
///
/// Where a request begins and ends is told by the handlers that read them (``FastPathHandler`` and
/// ``RequestProgressReporter``) with outbound user events (``Event``), which reach this handler
/// synchronously, before the read that caused them returns here.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// Progress of the requests on a connection.
    enum Event: Sendable {
        /// A request head was read completely; its body (if any) follows.
        case headReceived
        /// A request, with its body, was read completely.
        case requestReceived
        /// The last part of an answer was written.
        case answerWritten
        /// A request was read completely and its answer written, at once (``FastPathHandler``'s
        /// answers): ``requestReceived`` then ``answerWritten``.
        case answered
        /// The bytes received are not an HTTP/1 request (the decoder's reason).
        case malformed(String)
        /// The head has more header fields, or bytes of them, than the decoder takes (``DepotHTTPChannel/decoderLimits``).
        case tooManyFields
    }

    /// Why the server closed a connection itself (`depot_connections_closed_total{reason}`).
    enum Reason: String, CaseIterable, Sendable {
        case tooManyConnections = "too_many_connections"
        case headTimeout = "head_timeout"
        case headTooLarge = "head_too_large"
        case bodyTimeout = "body_timeout"
        case idleTimeout = "idle_timeout"
        case sendTimeout = "send_timeout"
        case malformedRequest = "malformed_request"
        case shuttingDown = "shutting_down"
    }

    private let limits: ConnectionLimits
    private let counter: ConnectionCounter
    private let metrics: ServerMetrics
    private var counted = false
    /// The server began to shut down before this connection became active.
    private var quiescedBeforeActive = false
    private var closing = false
    /// When the current head began, and its bytes so far; `nil` between heads.
    private var head: (started: NIODeadline, bytes: Int)?
    private var readingBody = false
    /// Requests read and not answered yet.
    private var unanswered = 0
    /// The request whose body is being read was answered already.
    private var answeredEarly = false
    private var lastRead = NIODeadline.now()
    private var idleSince = NIODeadline.now()
    /// Something was written since the kernel last showed nothing waiting to be acknowledged.
    private var sending = false
    private var acknowledged: (bytes: UInt64, at: NIODeadline)?
    private var check: RepeatedTask?

    init(limits: ConnectionLimits, counter: ConnectionCounter, metrics: ServerMetrics) {
        self.limits = limits
        self.counter = counter
        self.metrics = metrics
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        // A connection accepted as the server began to shut down may never have been handed to
        // the server's task. Made active, NIO traps on it ("Deinited NIOAsyncWriter without
        // calling finish()") and ends the process with every connection it serves; closed before
        // it is active, its client tries again elsewhere.
        if quiescedBeforeActive { return close(context, .shuttingDown) }
        start(context)
        context.fireChannelActive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, !context.channel.isActive { quiescedBeforeActive = true }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        let bytes = unwrapInboundIn(data)
        lastRead = .now()
        if head == nil, !readingBody { head = (lastRead, 0) }
        if var head {
            // A head ending in this read is judged by its own length, not by the body after it;
            // one that fits with the whole read needs no look for its end.
            if unanswered == 0, head.bytes + bytes.readableBytes > limits.maximumHeadSize, let end = Self.headEnd(in: bytes),
                head.bytes + end > limits.maximumHeadSize
            {
                return refuseHead(context)
            }
            head.bytes += bytes.readableBytes
            self.head = head
        }
        context.fireChannelRead(data)
        if let head, head.bytes > limits.maximumHeadSize, unanswered == 0 { refuseHead(context) }
    }

    /// The length up to and including the first blank line (`CRLF CRLF`) in `bytes`, if any.
    private static func headEnd(in bytes: ByteBuffer) -> Int? {
        bytes.withUnsafeReadableBytes { raw in
            guard raw.count >= 4 else { return nil }
            var index = 0
            while index + 3 < raw.count {
                if raw[index + 3] != 10 {
                    index += raw[index + 3] == 13 ? 1 : 4
                    continue
                }
                if raw[index] == 13, raw[index + 1] == 10, raw[index + 2] == 13 { return index + 4 }
                index += 1
            }
            return nil
        }
    }

    private func refuseHead(_ context: ChannelHandlerContext) {
        refuse(
            context, .headTooLarge, status: "431 Request Header Fields Too Large", code: .requestHeadTooLarge,
            message:
                "The request head has more than \(limits.maximumHeadSize) bytes (the server's --max-head-size); send fewer or shorter header fields."
        )
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        sending = true
        context.write(data, promise: promise)
    }

    /// A request was read whole: no head is being timed, and it waits for its answer (unless it was answered early).
    private func received() {
        head = nil
        readingBody = false
        if answeredEarly { answeredEarly = false } else { unanswered += 1 }
    }

    /// An answer went out: the connection is idle from now if nothing else waits.
    private func written() {
        // An answer before its request's body was read (a 401 to an upload) is that request's.
        if readingBody, unanswered == 0 { answeredEarly = true } else { unanswered = max(0, unanswered - 1) }
        idleSince = .now()
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let event = event as? Event else { return context.triggerUserOutboundEvent(event, promise: promise) }
        switch event {
        case .headReceived:
            head = nil
            readingBody = true
        case .requestReceived:
            received()
        case .answerWritten:
            written()
        case .answered:
            received()
            written()
        case .tooManyFields:
            if !closing {
                let decoder = DepotHTTPChannel.decoderLimits
                refuse(
                    context, .headTooLarge, status: "431 Request Header Fields Too Large", code: .requestHeadTooLarge,
                    message:
                        "The request has more than \(decoder.maxHeaderFieldCount) header or trailer fields, or more than \(decoder.maxHeaderListSize) bytes of them, or a longer request line; send fewer."
                )
            }
        case .malformed(let reason):
            if !closing {
                refuse(
                    context, .malformedRequest, status: "400 Bad Request", code: .badRequest,
                    message:
                        "The request is not valid HTTP/1.1 (\(Self.printable(reason))). Check the request line, the header fields and Content-Length."
                )
            }
        }
        promise?.succeed()
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !counted else { return }
        counted = true
        idleSince = .now()
        guard counter.add(maximum: limits.maximumConnections) else {
            return refuse(
                context, .tooManyConnections, status: "503 Service Unavailable", code: .unavailable,
                message:
                    "The server has \(limits.maximumConnections) connections open, its maximum (--max-connections); try again shortly.",
                extraHeaders: "Retry-After: 1\r\n")
        }
        let interval = Self.amount(limits.checkInterval)
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        check = context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            let (handler, context) = loopBound.value
            handler.checkDeadlines(context)
        }
    }

    private func stop() {
        check?.cancel()
        check = nil
        if counted {
            counted = false
            counter.remove()
        }
    }

    private func checkDeadlines(_ context: ChannelHandlerContext) {
        guard !closing else { return }
        let now = NIODeadline.now()
        if let head, unanswered == 0, now - head.started >= Self.amount(limits.headTimeout) {
            return refuse(
                context, .headTimeout, status: "408 Request Timeout", code: .requestTimeout,
                message: "The request head did not arrive within \(limits.headTimeout) (the server's --head-timeout).")
        }
        if readingBody, now - lastRead >= Self.amount(limits.bodyTimeout) { return close(context, .bodyTimeout) }
        if head == nil, !readingBody, unanswered == 0, !sending, now - max(idleSince, lastRead) >= Self.amount(limits.idleTimeout) {
            return close(context, .idleTimeout)
        }
        if sending { checkSending(context, now: now) }
    }

    /// Closes the connection when the client acknowledged nothing of what was sent for the send timeout.
    private func checkSending(_ context: ChannelHandlerContext, now: NIODeadline) {
        SendProgress.read(context.channel).assumeIsolated().whenSuccess { [self] progress in
            let handler = self
            guard let progress, !handler.closing else { return }
            guard progress.waiting || !context.channel.isWritable else {
                handler.sending = false
                handler.acknowledged = nil
                handler.idleSince = max(handler.idleSince, now)
                return
            }
            if let last = handler.acknowledged, last.bytes == progress.acknowledged {
                if now - last.at >= Self.amount(handler.limits.sendTimeout) { handler.close(context, .sendTimeout) }
            } else {
                handler.acknowledged = (progress.acknowledged, now)
            }
        }
    }

    /// Answers with a status of the server's own (no request handler is involved), then closes.
    private func refuse(
        _ context: ChannelHandlerContext, _ reason: Reason, status: String, code: DepotError.Code, message: String,
        extraHeaders: String = ""
    ) {
        closing = true
        metrics.recordConnectionClosed(reason)
        let body = DepotError(code, message).jsonBody
        var response = context.channel.allocator.buffer(capacity: 256 + body.count)
        response.writeString(
            "HTTP/1.1 \(status)\r\nServer: ModelDepot\r\nConnection: close\r\n\(extraHeaders)"
                + "Content-Type: application/json; charset=utf-8\r\nContent-Length: \(body.count)\r\n\r\n")
        response.writeBytes(body)
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(response))).assumeIsolated()
            .whenComplete { _ in
                context.close(promise: nil)
            }
    }

    /// Text of the parser's to quote in a message: printable ASCII, at most 120 characters.
    private static func printable(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" }.prefix(120).map(Character.init))
    }

    private func close(_ context: ChannelHandlerContext, _ reason: Reason) {
        closing = true
        metrics.recordConnectionClosed(reason)
        context.close(promise: nil)
    }

    private static func amount(_ duration: Duration) -> TimeAmount {
        .nanoseconds(Int64(duration.components.seconds) * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }
}
