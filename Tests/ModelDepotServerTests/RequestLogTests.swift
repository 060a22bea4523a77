import Foundation
import Testing

@testable import ModelDepotServer

/// The request log's buffer: lines written in the server's log format, a full buffer dropping and
/// counting lines instead of growing, nothing kept below the `info` level.
@Suite struct RequestLogTests {
    /// A request log writing into a temporary file, and that file's text.
    final class LogFile {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("request-log-\(UUID().uuidString)")
        let handle: FileHandle
        init() throws {
            _ = FileManager.default.createFile(atPath: url.path, contents: nil)
            handle = try FileHandle(forWritingTo: url)
        }
        deinit { try? FileManager.default.removeItem(at: url) }
        var lines: [Substring] { (try? String(contentsOf: url, encoding: .utf8))?.split(separator: "\n") ?? [] }
    }

    func line(_ status: Int, key: String? = "k1", error: String? = nil) -> RequestLog.Line {
        RequestLog.Line(
            seconds: RequestLog.now(), method: "GET", path: "/v1/models/flowers/manifest", route: "/v1/models/{name}/manifest",
            status: status, elapsed: .microseconds(1234), key: key, error: error)
    }

    @Test func linesAreWrittenInTheServersLogFormatWhenFlushed() throws {
        let file = try LogFile()
        let log = RequestLog(isEnabled: true, output: file.handle.fileDescriptor)
        log.record(line(304))
        log.record(line(401, key: nil, error: "unauthorized"))
        #expect(file.lines.isEmpty, "nothing is written before the flush")
        #expect(log.flush() == 2)
        let lines = file.lines
        #expect(lines.count == 2)
        #expect(
            lines[0].hasSuffix(
                " info depot: duration_ms=1.234 key=k1 method=GET path=/v1/models/flowers/manifest route=/v1/models/{name}/manifest status=304 [ModelDepotServer] request"
            ), "\(lines[0])")
        #expect(lines[1].contains(" duration_ms=1.234 error=unauthorized method=GET "), "\(lines[1])")
        #expect(lines[0].firstMatch(of: #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} /#) != nil, "\(lines[0])")
        #expect(log.flush() == 0)
        #expect(file.lines.count == 2)
    }

    @Test func aFullBufferDropsAndCountsLines() throws {
        let file = try LogFile()
        let log = RequestLog(isEnabled: true, capacity: 3, output: file.handle.fileDescriptor)
        for _ in 0..<5 { log.record(line(200)) }
        #expect(log.dropped == 2)
        #expect(ServerMetrics(requestLog: log).exposition().contains("depot_request_log_dropped_total 2\n"))
        #expect(log.flush() == 3)
        #expect(file.lines.filter { $0.contains(" status=200 ") }.count == 3)
        #expect(file.lines.last?.contains(" warning depot: dropped=2 ") == true, "\(file.lines)")
        log.record(line(200))
        #expect(log.flush() == 1)
        #expect(file.lines.filter { $0.contains(" status=200 ") }.count == 4, "the reused buffers hold no earlier line")
        #expect(file.lines.filter { $0.contains("dropped=") }.count == 1, "a drop is reported once")
        #expect(log.dropped == 2)
    }

    @Test func nothingIsKeptBelowTheInfoLevel() throws {
        let file = try LogFile()
        let log = RequestLog(isEnabled: false, output: file.handle.fileDescriptor)
        log.record(line(200))
        #expect(log.flush() == 0)
        #expect(file.lines.isEmpty)
    }

    @Test func durationsHaveThreeDecimals() {
        func milliseconds(_ duration: Duration) -> String {
            var text: [UInt8] = []
            RequestLog.appendMilliseconds(duration, to: &text)
            return String(decoding: text, as: UTF8.self)
        }
        #expect(milliseconds(.nanoseconds(80_000)) == "0.080")
        #expect(milliseconds(.milliseconds(2500)) == "2500.000")
        #expect(milliseconds(.microseconds(1005)) == "1.005")
        #expect(milliseconds(.seconds(1_234_567) + .microseconds(890)) == "1234567000.890")
        #expect(milliseconds(.zero) == "0.000")
        #expect(milliseconds(.microseconds(-5)) == "0.000")
    }

    @Test func aLineLeavesOutTheQueryAndKeepsTheRequestID() throws {
        let file = try LogFile()
        let log = RequestLog(isEnabled: true, output: file.handle.fileDescriptor)
        log.record(
            RequestLog.Line(
                seconds: RequestLog.now(), method: "POST", path: "/v1/blobs/sha256/ab?x-depot=1", route: "/v1/blobs/sha256/{hex}",
                status: 500, elapsed: .milliseconds(12), key: "k2", error: "internal_error", requestID: "r-42"))
        #expect(log.flush() == 1)
        #expect(
            file.lines.first?.hasSuffix(
                " info depot: duration_ms=12.000 error=internal_error key=k2 method=POST path=/v1/blobs/sha256/ab request_id=r-42 route=/v1/blobs/sha256/{hex} status=500 [ModelDepotServer] request"
            ) == true, "\(file.lines)")
    }
}
