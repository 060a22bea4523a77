import NIOCore
import NIOPosix

/// Answers manifests and blob downloads straight from the connection's bytes, first in the
/// pipeline, when ``HotPaths`` can answer from caches: no HTTP/1 decoder, no request task, no
/// router; manifests go out as one buffer, blobs with `sendfile` (a `FileRegion`).
///
/// Requests are read with ``HotRequestHead``. The first request it does not take, or that
/// ``HotPaths`` does not answer, goes on to NIO's HTTP/1 decoder and the router together with
/// everything after it on the connection, so pipelined answers keep their order.
///
/// One file is sent at a time, and nothing more is answered while the channel is not writable;
/// meanwhile requests wait here, up to ``HotRequestHead/maxLength`` bytes, then go to the router.
///
/// Graceful shutdown: Hummingbird's connection-state handler (further on) closes a connection it
/// believes idle when the server quiesces. It never sees the answers sent here, so the quiesce
/// event is held back until they are written, and from then on every request goes to the router,
/// which closes the connection after its answer.
final class HotPathHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = IOData

    private let paths: HotPaths
    /// Bytes received and not yet answered or passed on.
    private var received: ByteBuffer?
    /// Everything on this connection now goes to the router.
    private var passing = false
    /// A file answer is being sent.
    private var sendingFile = false
    /// The key this connection authenticated with.
    private var verified: HotPaths.VerifiedKey?
    /// The client's IP address, formatted once per connection and only once the throttle
    /// needs it (after some authentication failed).
    private var clientAddress: String??

    init(paths: HotPaths) { self.paths = paths }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !passing else { return context.fireChannelRead(data) }
        var bytes = unwrapInboundIn(data)
        if received == nil {
            received = bytes
        } else {
            received!.writeBuffer(&bytes)
        }
        answerReceived(context, duringRead: true)
    }

    /// The handlers further on see a read's end only once they have seen reads.
    func channelReadComplete(context: ChannelHandlerContext) {
        if passing { context.fireChannelReadComplete() }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, !passing { answerReceived(context, duringRead: false) }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        received = nil
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else { return context.fireUserInboundEventTriggered(event) }
        if !passing { pass(context, duringRead: false) }
        // Writes complete in order: once this empty one has, every answer sent here is out.
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(ByteBuffer())), promise: written)
        written.futureResult.assumeIsolated().whenComplete { _ in context.fireUserInboundEventTriggered(event) }
    }

    /// Answers the complete requests received, until one goes to the router, a file is being
    /// sent or the channel is not writable.
    private func answerReceived(_ context: ChannelHandlerContext, duringRead: Bool) {
        var answered = false
        defer { if answered { context.flush() } }
        while var bytes = received, bytes.readableBytes > 0 {
            guard !sendingFile, context.channel.isWritable else {
                if bytes.readableBytes > HotRequestHead.maxLength { pass(context, duringRead: duringRead) }
                return
            }
            switch HotRequestHead.parse(bytes) {
            case .incomplete:
                return
            case .other:
                return pass(context, duringRead: duringRead)
            case .request(let request, let length):
                let start = ContinuousClock.now
                guard let (answer, route, key) = paths.answer(request, from: address(context), verified: &verified) else {
                    return pass(context, duringRead: duringRead)
                }
                var file: NIOFileHandle?
                if let (path, identity, _, _, _) = answer.file {
                    // A file missing or changed since the index was loaded goes to the router, which answers the error.
                    guard let handle = try? NIOFileHandle(_deprecatedPath: path) else { return pass(context, duringRead: duringRead) }
                    guard let identity, (try? handle.withUnsafeFileDescriptor { FileIdentity(descriptor: $0) }) == identity else {
                        try? handle.close()
                        return pass(context, duringRead: duringRead)
                    }
                    file = handle
                }
                bytes.moveReaderIndex(forwardBy: length)
                received = bytes.readableBytes > 0 ? bytes : nil
                context.triggerUserOutboundEvent(ConnectionGuard.Event.requestReceived, promise: nil)
                respond(context, answer, file: file)
                context.triggerUserOutboundEvent(ConnectionGuard.Event.answerWritten, promise: nil)
                answered = true
                paths.log(request, route: route, status: Int(answer.status.code), start: start, key: key)
            }
        }
    }

    private func address(_ context: ChannelHandlerContext) -> String? {
        if let clientAddress { return clientAddress }
        let address = context.channel.remoteAddress?.ipAddress
        clientAddress = .some(address)
        return address
    }

    /// Hands what was received, and everything after it, to the HTTP/1 decoder.
    private func pass(_ context: ChannelHandlerContext, duringRead: Bool) {
        passing = true
        guard let bytes = received else { return }
        received = nil
        context.fireChannelRead(wrapInboundOut(bytes))
        if !duringRead { context.fireChannelReadComplete() }
    }

    private func respond(_ context: ChannelHandlerContext, _ answer: HotAnswer, file: NIOFileHandle?) {
        context.write(wrapOutboundOut(.byteBuffer(HotAnswerEncoder.encode(answer, allocator: context.channel.allocator))), promise: nil)
        guard let file, let range = answer.file?.range else { return }
        sendingFile = true
        answer.file?.onStart()
        let sent = context.eventLoop.makePromise(of: Void.self)
        context.write(wrapOutboundOut(.fileRegion(FileRegion(fileHandle: file, readerIndex: range.lowerBound, endIndex: range.upperBound + 1))),
                      promise: sent)
        sent.futureResult.assumeIsolated().whenComplete { [self] result in
            try? file.close()
            if case .success = result { answer.file?.onComplete() }
            sendingFile = false
            if !passing { answerReceived(context, duringRead: false) }
        }
    }
}
