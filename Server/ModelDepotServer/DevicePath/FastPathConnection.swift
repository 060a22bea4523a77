import NIOCore

/// The state of one connection on the fast path, as a value with no channel: who answers its next
/// request, the bytes waiting, and the work under way. ``FastPathHandler`` reports each event and
/// does what ``next(writable:duringRead:)`` says; the decisions are tested alone.
struct FastPathConnection {
    /// Who answers the connection's next request.
    enum Mode: Equatable {
        /// The fast path, when it can.
        case answering
        /// The router got a request whose body is still arriving: `remaining` more bytes go on to
        /// the decoder as they come; then the connection waits for the router's answer, or is
        /// answered here again when the router `answered` already (before the body).
        case forwardingBody(remaining: Int, answered: Bool)
        /// The router got one request and has not answered it yet; what follows waits.
        case awaitingRouter
        /// The router, for good.
        case passing
    }

    /// What the fast path is doing for the request at the front.
    enum Work: Equatable {
        case none
        /// A blob is being opened or sent.
        case file
        /// An outcome batch is being written: its bytes are still the first received and must not
        /// go to the router (which would apply it again), so nothing is passed on until it is answered.
        case batch
    }

    /// What the handler does next.
    enum Step: Equatable {
        /// Nothing until the next event.
        case wait
        /// These bytes go to the HTTP/1 decoder, followed by a read's end when `readComplete`
        /// (outside a read; within one, ``readComplete()`` says so at its end).
        case handOn(ByteBuffer, readComplete: Bool)
        /// The request at the front of these bytes: the handler answers it (``consume(_:)``), gives
        /// it to the router (``hand(_:)``) or the connection with it (``pass()``), and asks again;
        /// or it begins work on it (``begin(_:)``) or waits for more bytes, and asks again at
        /// the next event.
        case look(ByteBuffer)
    }

    private(set) var mode = Mode.answering
    private(set) var work = Work.none
    /// Bytes received and not yet answered or handed on.
    private var received: ByteBuffer?
    /// Bytes arrived since the last ``next(writable:duringRead:)``: what waits for the router is
    /// measured against a head's worth then, not when a handed body has just gone on.
    private var arrived = false
    /// Bytes went to the decoder during the current read: its end goes on too.
    private var handedDuringRead = false
    /// The channel asked for a read while a batch was being written and more than a head's worth waited.
    private var heldRead = false
    /// The server began to quiesce while a batch was being written.
    private var heldQuiesce = false

    /// Bytes that arrived; then ask ``next(writable:duringRead:)``.
    mutating func receive(_ bytes: ByteBuffer) {
        arrived = true
        if received == nil {
            received = bytes
        } else {
            var bytes = bytes
            received!.writeBuffer(&bytes)
        }
    }

    /// What to do now.
    mutating func next(writable: Bool, duringRead: Bool) -> Step {
        let waiting = received?.readableBytes ?? 0
        let arrivedNow = arrived
        arrived = false
        switch mode {
        case .passing:
            guard let bytes = received else { return .wait }
            received = nil
            return .handOn(bytes, readComplete: !duringRead)
        case .forwardingBody(let remaining, let answered):
            guard var bytes = received else { return .wait }
            let count = min(remaining, bytes.readableBytes)
            let part = bytes.readSlice(length: count) ?? ByteBuffer()
            received = bytes.readableBytes > 0 ? bytes : nil
            mode =
                count < remaining
                ? .forwardingBody(remaining: remaining - count, answered: answered) : answered ? .answering : .awaitingRouter
            if duringRead { handedDuringRead = true }
            return .handOn(part, readComplete: !duringRead)
        case .awaitingRouter:
            guard arrivedNow, waiting > FastPathRequestHead.maxLength else { return .wait }
            mode = .passing
            return next(writable: writable, duringRead: duringRead)
        case .answering:
            guard let bytes = received, waiting > 0 else { return .wait }
            guard work == .none, writable else {
                guard waiting > FastPathRequestHead.maxLength, work != .batch else { return .wait }
                mode = .passing
                return next(writable: writable, duringRead: duringRead)
            }
            return .look(bytes)
        }
    }

    /// The first `length` bytes were answered here.
    mutating func consume(_ length: Int) {
        received?.moveReaderIndex(forwardBy: length)
        if received?.readableBytes == 0 { received = nil }
    }

    /// The first `length` bytes (one request, with its body) go to the router: those received,
    /// the rest of its body as it arrives; what follows waits until the router has answered.
    mutating func hand(_ length: Int) {
        mode = .forwardingBody(remaining: length, answered: false)
    }

    /// Everything from now on goes to the router.
    mutating func pass() {
        mode = .passing
    }

    mutating func begin(_ work: Work) {
        self.work = work
    }

    /// The file was sent (or could not be opened).
    mutating func fileDone() {
        work = .none
    }

    /// The batch was answered: the read and the quiesce held meanwhile, to be done now.
    mutating func batchDone() -> (read: Bool, quiesce: Bool) {
        defer { (work, heldRead, heldQuiesce) = (.none, false, false) }
        return (heldRead, heldQuiesce)
    }

    /// Whether a read's end goes on to the handlers further on (they see it only after reads).
    mutating func readComplete() -> Bool {
        guard mode == .passing || handedDuringRead else { return false }
        handedDuringRead = false
        return true
    }

    /// Whether to read now: while a batch is being written, reading stops once more than a
    /// head's worth waits behind it.
    mutating func read() -> Bool {
        guard work == .batch, (received?.readableBytes ?? 0) > FastPathRequestHead.maxLength else { return true }
        heldRead = true
        return false
    }

    /// The server quiesces: `true` when every request goes to the router from now on, `false`
    /// when that waits for the batch being written (``batchDone()`` says so).
    mutating func quiesce() -> Bool {
        guard work != .batch else {
            heldQuiesce = true
            return false
        }
        mode = .passing
        return true
    }

    /// The router's answer went out: `true` when the connection is answered here again.
    mutating func routerAnswered() -> Bool {
        switch mode {
        case .forwardingBody(let remaining, _):
            mode = .forwardingBody(remaining: remaining, answered: true)
            return false
        case .awaitingRouter:
            mode = .answering
            return true
        case .answering, .passing:
            return false
        }
    }

    mutating func closed() {
        received = nil
    }
}
