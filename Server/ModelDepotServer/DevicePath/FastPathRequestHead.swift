import NIOCore

#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

/// A request head read straight from a connection's bytes, for ``FastPathHandler``, keeping only
/// where its ``DeviceField``s lie (``FastPathFields``): only the plainest requests — `GET /target HTTP/1.1` (or a `POST` with a
/// small `Content-Length` body), one `Host`, well-formed fields of visible ASCII and nothing that
/// changes the connection — are taken; anything else, well-formed or not, is `.other` and goes to
/// NIO's HTTP/1 decoder and the router, which answer it as always.
enum FastPathRequestHead: Equatable {
    /// The head has not fully arrived yet.
    case incomplete
    /// Not a request answered here: the router decides.
    case other
    /// A plain `GET` whose head takes `length` bytes.
    case request(FastPathRequest, length: Int)
    /// A plain `POST` with a `Content-Length` body of at most ``maxRoutedBody`` bytes (an outcome
    /// batch): the head takes `head` bytes, head and body `length`.
    case posted(FastPathRequest, head: Int, length: Int)
    /// A request for the router whose end is known: any other method, the same plain head, and no
    /// body or a `Content-Length` one of at most ``maxRoutedBody`` bytes; `length` counts head and
    /// body. It goes to the router alone, and the connection comes back here after its answer.
    case routed(length: Int)

    /// The longest head read here; a longer one goes to the router.
    static let maxLength = 16 * 1024
    /// The longest body of a request handed to the router alone (an outcome batch, a rollout
    /// change); a longer one (an upload) takes the connection to the router for good.
    static let maxRoutedBody = 64 * 1024

    /// What a field's name means here.
    private enum Role {
        /// Asks for more than a plain answer (a chunked body, another protocol, a closing connection).
        case declined
        case contentLength
        case host
        /// Read by the device resolvers (``FastPaths``): kept.
        case read(DeviceField)
    }

    /// The names with a role, lower-case, with their roles by length: a field's name is compared
    /// only with those of its length. Every other field is checked like these and dropped, which
    /// spares the `String` of each. Flat arrays of plain values, so that a look-up retains nothing.
    private struct Roles {
        /// The names, one after another.
        var names: [UInt8] = []
        /// Where each name starts in ``names``, and its role, shortest names first.
        var entries: [(start: Int, role: Role)] = []
        /// The indices in ``entries`` of the names of each length.
        var byLength: [Range<Int>] = []

        init() {
            let all: [(name: String, role: Role)] =
                ["transfer-encoding", "connection", "upgrade", "expect", "te", "keep-alive"].map { ($0, .declined) }
                + [("host", .host), ("content-length", .contentLength)]
                + DeviceField.allCases.map { ($0.name.canonicalName, .read($0)) }
            for length in 0...all.map(\.name.utf8.count).max()! {
                let first = entries.count
                for named in all where named.name.utf8.count == length {
                    entries.append((names.count, named.role))
                    names.append(contentsOf: named.name.utf8)
                }
                byLength.append(first..<entries.count)
            }
        }

        /// The role of the field called `name` (in any case), if it has one.
        func role(of name: UnsafeRawBufferPointer) -> Role? {
            guard name.count < byLength.count else { return nil }
            for index in byLength[name.count] {
                let entry = entries[index]
                if (0..<name.count).allSatisfy({ name[$0] | 0x20 == names[entry.start + $0] }) { return entry.role }
            }
            return nil
        }
    }

    private static let roles = Roles()

    /// Reads the head at the start of `buffer`'s readable bytes.
    static func parse(_ buffer: ByteBuffer) -> FastPathRequestHead {
        buffer.withUnsafeReadableBytes { bytes in
            var reader = LineReader(bytes: bytes)
            guard let first = reader.nextLine() else { return reader.complete ? .other : .incomplete }
            guard let (method, target) = requestLine(first) else { return .other }
            let roles = Self.roles
            var fields = FastPathFields(in: buffer)
            var hasHost = false
            var bodyLength: Int?
            while true {
                guard let line = reader.nextLine() else { return reader.complete ? .other : .incomplete }
                if line.isEmpty { break }
                guard let (name, value) = field(line) else { return .other }
                switch roles.role(of: name) {
                case .declined?:
                    return .other
                case .contentLength?:
                    guard bodyLength == nil, let length = contentLength(value) else { return .other }
                    bodyLength = length
                case .host?:
                    guard !hasHost else { return .other }
                    hasHost = true
                case .read(let field)?:
                    guard fields.set(field, start: bytes.baseAddress!.distance(to: value.baseAddress!), count: value.count) else {
                        return .other
                    }
                case nil:
                    break
                }
            }
            guard hasHost else { return .other }
            switch (method, bodyLength) {
            case (.get, nil):
                return .request(FastPathRequest(path: String(decoding: target, as: UTF8.self), fields: fields), length: reader.offset)
            case (.post, let body?):
                return .posted(
                    FastPathRequest(path: String(decoding: target, as: UTF8.self), fields: fields), head: reader.offset,
                    length: reader.offset + body)
            default:
                return .routed(length: reader.offset + (bodyLength ?? 0))
            }
        }
    }

    /// The methods told apart here.
    private enum Method {
        case get, post, other
    }

    /// `METHOD /target HTTP/1.1`: the method and the target (visible ASCII, starting with `/`).
    /// The method is 1 to 16 token characters.
    private static func requestLine(_ line: UnsafeRawBufferPointer) -> (method: Method, target: UnsafeRawBufferPointer)? {
        let suffix: StaticString = " HTTP/1.1"
        guard line.count > suffix.utf8CodeUnitCount,
            memcmp(line.baseAddress! + (line.count - suffix.utf8CodeUnitCount), suffix.utf8Start, suffix.utf8CodeUnitCount) == 0,
            let space = line.firstIndex(of: 0x20), (1...16).contains(space),
            space + 1 < line.count - suffix.utf8CodeUnitCount
        else { return nil }
        let method = UnsafeRawBufferPointer(rebasing: line[..<space])
        for byte in method where !isTokenCharacter(byte) { return nil }
        let target = UnsafeRawBufferPointer(rebasing: line[(space + 1)..<(line.count - suffix.utf8CodeUnitCount)])
        guard target.first == UInt8(ascii: "/") else { return nil }
        guard isVisible(target, blanks: false) else { return nil }
        return (method.elementsEqual("GET".utf8) ? .get : method.elementsEqual("POST".utf8) ? .post : .other, target)
    }

    /// A `Content-Length` of 1 to 6 digits, at most ``maxRoutedBody``; `nil` otherwise.
    private static func contentLength(_ value: UnsafeRawBufferPointer) -> Int? {
        guard (1...6).contains(value.count) else { return nil }
        var length = 0
        for byte in value {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            length = length * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return length <= maxRoutedBody ? length : nil
    }

    /// Name and value (without surrounding whitespace) of a `name: value` line; `nil` unless the
    /// name is a token and the value visible ASCII, spaces and tabs.
    private static func field(_ line: UnsafeRawBufferPointer) -> (name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)? {
        guard let found = memchr(line.baseAddress!, Int32(UInt8(ascii: ":")), line.count) else { return nil }
        let colon = line.baseAddress!.distance(to: UnsafeRawPointer(found))
        guard colon > 0 else { return nil }
        for byte in UnsafeRawBufferPointer(rebasing: line[..<colon]) where !isTokenCharacter(byte) { return nil }
        var start = colon + 1, end = line.count
        while start < end, line[start] == 0x20 || line[start] == 0x09 { start += 1 }
        while end > start, line[end - 1] == 0x20 || line[end - 1] == 0x09 { end -= 1 }
        let value = UnsafeRawBufferPointer(rebasing: line[start..<end])
        guard isVisible(value, blanks: true) else { return nil }
        return (UnsafeRawBufferPointer(rebasing: line[..<colon]), value)
    }

    /// Whether each of `bytes` is visible ASCII (`0x21...0x7E`), or also a space or a tab when
    /// `blanks`: eight bytes at a time, and one by one only in a word with a byte outside.
    private static func isVisible(_ bytes: UnsafeRawBufferPointer, blanks: Bool) -> Bool {
        func fits(_ byte: UInt8) -> Bool { (0x21...0x7E).contains(byte) || (blanks && (byte == 0x20 || byte == 0x09)) }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs = ones &* 0x80
        let lowest = ones &* (blanks ? 0x20 : 0x21)
        var index = 0
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            // A byte below the lowest sets its high bit in the first term; one above 0x7E in the second.
            let below = (word &- lowest) & ~word & highs
            let above = ((word &+ ones) | word) & highs
            if below | above != 0 {
                for byte in UnsafeRawBufferPointer(rebasing: bytes[index..<(index + 8)]) where !fits(byte) { return false }
            }
            index += 8
        }
        for byte in UnsafeRawBufferPointer(rebasing: bytes[index...]) where !fits(byte) { return false }
        return true
    }

    /// RFC 9110's `tchar` (letters, digits and ``!#$%&'*+-.^_`|~``) as a bit per ASCII byte:
    /// bytes 0–63, then 64–127. Literal masks, so that no byte pays for a lazy initialisation.
    private static let tokenCharactersLow: UInt64 = 0x03ff_6cfa_0000_0000
    private static let tokenCharactersHigh: UInt64 = 0x57ff_ffff_c7ff_fffe

    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        byte < 64 ? tokenCharactersLow & (1 << UInt64(byte)) != 0 : byte < 128 && tokenCharactersHigh & (1 << UInt64(byte - 64)) != 0
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
            let end = min(bytes.count, FastPathRequestHead.maxLength)
            guard offset < end, let found = memchr(bytes.baseAddress! + offset, 0x0A, end - offset) else {
                complete = end == FastPathRequestHead.maxLength
                return nil
            }
            let feed = bytes.baseAddress!.distance(to: UnsafeRawPointer(found))
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

/// A plain `GET` (or a batch's `POST`) read by ``FastPathRequestHead``: its target and
/// ``DeviceField``s. Its fields hold the bytes received on the connection from the request on:
/// keep the strings needed, not the request, across a wait (a file being opened, a batch being
/// written), or the next bytes to arrive copy the whole backlog.
struct FastPathRequest: Equatable, Sendable {
    let path: String
    let fields: FastPathFields
}
