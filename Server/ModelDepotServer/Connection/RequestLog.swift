import Synchronization

#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

/// The request log: one line per request, kept off the event loop. A request only appends its
/// values to a bounded buffer; ``RequestLogService`` formats what gathered and writes it to
/// standard error with one `write` per batch. A full buffer drops lines and counts them
/// (`depot_request_log_dropped_total`) instead of slowing requests down.
///
/// Lines have the format of swift-log's `StreamLogHandler` that the server's other messages use:
/// `2026-11-23T23:06:56+0000 info depot: duration_ms=0.08 key=… method=GET path=… route=… status=304 [ModelDepotServer] request`.
final class RequestLog: Sendable {
    /// What one request leaves in the log.
    struct Line: Sendable {
        var seconds: Int
        var method: String
        /// The request target; a query (from `?`) is left out of the line.
        var path: String
        var route: String
        var status: Int
        var elapsed: Duration
        var key: String?
        var error: String?
        var requestID: String?
    }

    private struct Pending {
        var lines: [Line] = []
        /// The lines and text of the last write, emptied: the next write's buffers, so that no
        /// write allocates (and faults in) new ones.
        var spare: [Line] = []
        var spareText: [UInt8] = []
        var dropped = 0
        var droppedReported = 0
    }

    /// Lines held at most between two writes: two seconds of 30,000 requests a second.
    static let defaultCapacity = 1 << 16

    /// Whether lines are kept at all (the log level is `info` or below).
    let isEnabled: Bool
    private let capacity: Int
    private let output: Int32
    private let pending: Mutex<Pending>

    init(isEnabled: Bool, capacity: Int = RequestLog.defaultCapacity, output: Int32 = STDERR_FILENO) {
        self.isEnabled = isEnabled
        self.capacity = capacity
        self.output = output
        var initial = Pending()
        initial.lines.reserveCapacity(min(capacity, 4096))
        pending = Mutex(initial)
    }

    /// Lines dropped so far because the buffer was full.
    var dropped: Int { pending.withLock { $0.dropped } }

    /// Keeps a line for the next write, or counts it as dropped when the buffer is full.
    func record(_ line: consuming Line) {
        guard isEnabled else { return }
        // Moved into the buffer, not copied: no retain of its strings.
        var line = Optional(line)
        pending.withLock { pending in
            if pending.lines.count < capacity, let line = line.take() {
                pending.lines.append(line)
            } else {
                pending.dropped += 1
            }
        }
    }

    /// The wall clock's current second, for ``Line/seconds``.
    static func now() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return time.tv_sec
    }

    /// Formats and writes every line gathered since the last call; returns how many it wrote.
    @discardableResult
    func flush() -> Int {
        var lines: [Line] = []
        var text: [UInt8] = []
        let newlyDropped = pending.withLock { pending -> Int in
            swap(&lines, &pending.spare)
            swap(&text, &pending.spareText)
            lines.reserveCapacity(min(capacity, max(pending.lines.count, 4096)))
            swap(&lines, &pending.lines)
            defer { pending.droppedReported = pending.dropped }
            return pending.dropped - pending.droppedReported
        }
        guard !lines.isEmpty || newlyDropped > 0 else { return 0 }
        let count = lines.count
        text.reserveCapacity(count * 200 + 200)
        // The formatted second, reused for every line of that second.
        var stamp = (second: -1, text: "")
        // Read in place: a line is not copied (nor its strings retained) to be formatted.
        lines.withUnsafeBufferPointer { lines in
            for index in lines.indices {
                let second = lines[index].seconds
                if second != stamp.second { stamp = (second, Self.timestamp(second)) }
                append(lines[index], stamp: stamp.text, to: &text)
            }
        }
        if newlyDropped > 0 {
            text.append(
                contentsOf:
                    "\(Self.timestamp(Self.now())) warning depot: dropped=\(newlyDropped) [ModelDepotServer] request log lines dropped: more requests than the log could write\n"
                    .utf8)
        }
        emit(text)
        lines.removeAll(keepingCapacity: true)
        text.removeAll(keepingCapacity: true)
        pending.withLock { pending in
            pending.spare = lines
            pending.spareText = text
        }
        return count
    }

    /// One line's bytes, without a `String` in between.
    private func append(_ line: borrowing Line, stamp: String, to text: inout [UInt8]) {
        // swift-log's order: metadata keys sorted.
        text.append(contentsOf: stamp.utf8)
        text.append(contentsOf: " info depot: duration_ms=".utf8)
        Self.appendMilliseconds(line.elapsed, to: &text)
        if let error = line.error {
            text.append(contentsOf: " error=".utf8)
            text.append(contentsOf: error.utf8)
        }
        if let key = line.key {
            text.append(contentsOf: " key=".utf8)
            text.append(contentsOf: key.utf8)
        }
        text.append(contentsOf: " method=".utf8)
        text.append(contentsOf: line.method.utf8)
        text.append(contentsOf: " path=".utf8)
        text.append(contentsOf: line.path.utf8.prefix { $0 != UInt8(ascii: "?") })
        if let requestID = line.requestID {
            text.append(contentsOf: " request_id=".utf8)
            text.append(contentsOf: requestID.utf8)
        }
        text.append(contentsOf: " route=".utf8)
        text.append(contentsOf: line.route.utf8)
        text.append(contentsOf: " status=".utf8)
        Self.appendDecimal(line.status, to: &text)
        text.append(contentsOf: " [ModelDepotServer] request\n".utf8)
    }

    /// Milliseconds with three decimals (a negative duration as zero).
    static func appendMilliseconds(_ elapsed: Duration, to text: inout [UInt8]) {
        let microseconds = Int(max(0, elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000))
        appendDecimal(microseconds / 1000, to: &text)
        text.append(UInt8(ascii: "."))
        appendDecimal(microseconds % 1000, digits: 3, to: &text)
    }

    /// `value` (at least 0) in decimal, padded with zeros to `digits`.
    private static func appendDecimal(_ value: Int, digits: Int = 1, to text: inout [UInt8]) {
        var count = 1
        var rest = value / 10
        while rest > 0 {
            count += 1
            rest /= 10
        }
        let end = text.count + max(count, digits)
        text.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: max(count, digits)))
        rest = value
        var index = end - 1
        while rest > 0 {
            text[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
            index -= 1
        }
    }

    private static func timestamp(_ second: Int) -> String {
        var time = second
        var local = tm()
        localtime_r(&time, &local)
        var buffer = [Int8](repeating: 0, count: 64)
        strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func emit(_ text: [UInt8]) {
        text.withUnsafeBufferPointer { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(output, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}
