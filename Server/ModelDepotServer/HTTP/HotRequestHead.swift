import HTTPTypes
import NIOCore

/// A request head read straight from a connection's bytes, for ``HotPathHandler``, keeping only
/// its ``DeviceField``s: only the plainest requests — `GET /target HTTP/1.1`, one `Host`, well-formed fields of visible ASCII, no
/// body and nothing that changes the connection — are taken; anything else, well-formed or not,
/// is `.other` and goes to NIO's HTTP/1 decoder and the router, which answer it as always.
enum HotRequestHead: Equatable {
    /// The head has not fully arrived yet.
    case incomplete
    /// Not a request answered here: the router decides.
    case other
    /// A plain `GET` whose head takes `length` bytes.
    case request(HotRequest, length: Int)

    /// The longest head read here; a longer one goes to the router.
    static let maxLength = 16 * 1024

    /// Fields that ask for more than a plain answer (a body, another protocol, a closing connection).
    private static let declined: [[UInt8]] = ["content-length", "transfer-encoding", "connection", "upgrade", "expect", "te", "keep-alive"]
        .map { Array($0.utf8) }
    private static let host = Array("host".utf8)
    /// The fields the device resolvers read (``HotPaths``): the only ones kept. Every other field
    /// is checked like these and dropped, which spares the `HTTPField.Name` and `String` of each.
    private static let read = DeviceField.allCases.map { (bytes: Array($0.name.canonicalName.utf8), field: $0) }

    /// Reads the head at the start of `buffer`'s readable bytes.
    static func parse(_ buffer: ByteBuffer) -> HotRequestHead {
        buffer.withUnsafeReadableBytes { bytes in
            var reader = LineReader(bytes: bytes)
            guard let first = reader.nextLine() else { return reader.complete ? .other : .incomplete }
            guard let target = target(of: first) else { return .other }
            var fields = HotFields()
            var authority: String?
            while true {
                guard let line = reader.nextLine() else { return reader.complete ? .other : .incomplete }
                if line.isEmpty { break }
                guard let (name, value) = field(line), !declined.contains(where: { equalsIgnoringCase(name, $0) }) else { return .other }
                if equalsIgnoringCase(name, host) {
                    guard authority == nil else { return .other }
                    authority = String(decoding: value, as: UTF8.self)
                } else if let kept = read.first(where: { equalsIgnoringCase(name, $0.bytes) }) {
                    guard fields.set(kept.field, String(decoding: value, as: UTF8.self)) else { return .other }
                }
            }
            guard let authority else { return .other }
            return .request(HotRequest(path: target, authority: authority, fields: fields), length: reader.offset)
        }
    }

    /// The target of `GET /target HTTP/1.1`: visible ASCII, starting with `/`.
    private static func target(of line: UnsafeRawBufferPointer) -> String? {
        let prefix = "GET /".utf8, suffix = " HTTP/1.1".utf8
        guard line.count >= prefix.count + suffix.count, line.starts(with: prefix), line.suffix(suffix.count).elementsEqual(suffix) else { return nil }
        let target = line[(prefix.count - 1)..<(line.count - suffix.count)]
        guard target.allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
        return String(decoding: UnsafeRawBufferPointer(rebasing: target), as: UTF8.self)
    }

    /// Name and value (without surrounding whitespace) of a `name: value` line; `nil` unless the
    /// name is a token and the value visible ASCII, spaces and tabs.
    private static func field(_ line: UnsafeRawBufferPointer) -> (name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0,
              line[..<colon].allSatisfy(isTokenCharacter) else { return nil }
        var start = colon + 1, end = line.count
        while start < end, line[start] == 0x20 || line[start] == 0x09 { start += 1 }
        while end > start, line[end - 1] == 0x20 || line[end - 1] == 0x09 { end -= 1 }
        let value = UnsafeRawBufferPointer(rebasing: line[start..<end])
        guard value.allSatisfy({ (0x20...0x7E).contains($0) || $0 == 0x09 }) else { return nil }
        return (UnsafeRawBufferPointer(rebasing: line[..<colon]), value)
    }

    /// RFC 9110's `tchar`.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"): true
        default: false
        }
    }

    /// Whether `bytes` spell the lower-case ASCII `lower`, ignoring case.
    private static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ lower: [UInt8]) -> Bool {
        bytes.count == lower.count && zip(bytes, lower).allSatisfy { ($0 | 0x20) == $1 }
    }

    /// Lines ending in CRLF, within the first ``maxLength`` bytes.
    private struct LineReader {
        let bytes: UnsafeRawBufferPointer
        /// Where the next line starts.
        var offset = 0
        /// Whether reading stopped for good (a line without CR before its LF, or the length limit)
        /// rather than for want of bytes.
        var complete = false

        init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        /// The next line without its CRLF, or `nil` (see ``complete``).
        mutating func nextLine() -> UnsafeRawBufferPointer? {
            let end = min(bytes.count, HotRequestHead.maxLength)
            guard let feed = bytes[offset..<end].firstIndex(of: 0x0A) else {
                complete = end == HotRequestHead.maxLength
                return nil
            }
            guard feed > offset, bytes[feed - 1] == 0x0D else {
                complete = true
                return nil
            }
            let line = UnsafeRawBufferPointer(rebasing: bytes[offset..<(feed - 1)])
            offset = feed + 1
            return line
        }
    }
}

/// A plain `GET` read by ``HotRequestHead``: its target, `Host` and ``DeviceField``s.
struct HotRequest: Equatable, Sendable {
    let path: String
    let authority: String
    let fields: HotFields
}
