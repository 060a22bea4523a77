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
    /// The formatted time of the last second seen, reused for every line of that second.
    private let lastSecond = Mutex<(second: Int, text: String)>((-1, ""))

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
    func record(_ line: Line) {
        guard isEnabled else { return }
        pending.withLock { pending in
            if pending.lines.count < capacity {
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
        let (lines, newlyDropped) = pending.withLock { pending -> ([Line], Int) in
            var taken: [Line] = []
            taken.reserveCapacity(min(capacity, max(pending.lines.count, 4096)))
            swap(&taken, &pending.lines)
            defer { pending.droppedReported = pending.dropped }
            return (taken, pending.dropped - pending.droppedReported)
        }
        guard !lines.isEmpty || newlyDropped > 0 else { return 0 }
        var text = ""
        text.reserveCapacity(lines.count * 200 + 100)
        for line in lines { append(line, to: &text) }
        if newlyDropped > 0 {
            text +=
                "\(timestamp(Self.now())) warning depot: dropped=\(newlyDropped) [ModelDepotServer] request log lines dropped: more requests than the log could write\n"
        }
        emit(text)
        return lines.count
    }

    private func append(_ line: Line, to text: inout String) {
        // swift-log's order: metadata keys sorted.
        text += timestamp(line.seconds)
        text += " info depot: duration_ms="
        text += Self.milliseconds(line.elapsed)
        if let error = line.error {
            text += " error="
            text += error
        }
        if let key = line.key {
            text += " key="
            text += key
        }
        text += " method="
        text += line.method
        text += " path="
        text += Substring(line.path.utf8.prefix { $0 != UInt8(ascii: "?") })
        if let requestID = line.requestID {
            text += " request_id="
            text += requestID
        }
        text += " route="
        text += line.route
        text += " status="
        text += String(line.status)
        text += " [ModelDepotServer] request\n"
    }

    /// Milliseconds with three decimals.
    static func milliseconds(_ elapsed: Duration) -> String {
        let microseconds = elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000
        let fraction = String(microseconds % 1000)
        return String(microseconds / 1000) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    private func timestamp(_ second: Int) -> String {
        lastSecond.withLock { last in
            guard last.second != second else { return last.text }
            var time = second
            var local = tm()
            localtime_r(&time, &local)
            var buffer = [Int8](repeating: 0, count: 64)
            strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
            last = (second, String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            return last.text
        }
    }

    private func emit(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
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
