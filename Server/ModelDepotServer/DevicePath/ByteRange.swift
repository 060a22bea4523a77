/// A `Range` request header resolved against a file's length (RFC 9110 §14).
///
/// Only a single range is honoured; multiple ranges and unknown units get the full file, as the
/// RFC allows. A value type with no I/O, tested on its own.
enum ByteRange: Equatable {
    /// Serve the whole file (no header, an unsupported form, or a header to ignore).
    case full
    /// Serve bytes `lowerBound...upperBound` with `206`.
    case partial(ClosedRange<Int>)
    /// Nothing of the file is in range: `416` with `Content-Range: bytes */length`.
    case unsatisfiable

    init(header: String?, length: Int) {
        guard let header else {
            self = .full
            return
        }
        let trimmed = header.trimmingSpaces
        guard trimmed.lowercased().hasPrefix("bytes=") else {
            self = .full
            return
        }
        let spec = String(trimmed.dropFirst("bytes=".count)).trimmingSpaces
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else {
            self = .full
            return
        }
        let first = spec[..<dash].trimmingSpaces
        let last = spec[spec.index(after: dash)...].trimmingSpaces
        let digits = { (text: String) in text.utf8.allSatisfy { (0x30...0x39).contains($0) } }
        guard digits(first), digits(last), !(first.isEmpty && last.isEmpty) else {
            self = .full
            return
        }
        if first.isEmpty {
            // Suffix range: the last n bytes.
            guard let count = Int(last) else {
                self = length > 0 ? .partial(0...(length - 1)) : .unsatisfiable
                return
            }
            guard count > 0, length > 0 else {
                self = .unsatisfiable
                return
            }
            self = .partial(max(0, length - count)...(length - 1))
            return
        }
        guard let start = Int(first), start < length else {
            self = .unsatisfiable
            return
        }
        let end = last.isEmpty ? length - 1 : min(Int(last) ?? (length - 1), length - 1)
        guard end >= start else {
            self = .full  // first-pos > last-pos: an invalid range-spec is ignored
            return
        }
        self = .partial(start...end)
    }
}

extension Substring {
    /// The text without leading and trailing spaces and tabs (header whitespace, RFC 9110 §5.6.3).
    var trimmingSpaces: String {
        let isText = { (byte: UInt8) in byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") }
        guard let first = utf8.firstIndex(where: isText), let last = utf8.lastIndex(where: isText) else { return "" }
        return String(self[first...last])
    }
}

extension String {
    /// The text without leading and trailing spaces and tabs.
    var trimmingSpaces: String { self[...].trimmingSpaces }
}
