import ModelDepotShared

/// `application/x-www-form-urlencoded` parsing as the WHATWG URL standard defines it: any bytes
/// in, name–value pairs out, never a trap.
///
/// The body is split on `&`; empty pieces are skipped; each piece splits at its first `=` (no `=`:
/// the whole piece is the name, the value is empty); `+` becomes a space; `%XY` with two hex
/// digits becomes that byte and any other `%` stays as it is; the bytes are read as UTF-8, with
/// U+FFFD for what is not.
enum FormURLEncoded {
    /// The pairs of `body`, in order (a name may repeat).
    static func pairs<Bytes: Collection<UInt8>>(_ body: Bytes) -> [(name: String, value: String)] {
        body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true).map { piece in
            guard let equals = piece.firstIndex(of: UInt8(ascii: "=")) else { return (decoded(piece), "") }
            return (decoded(piece[..<equals]), decoded(piece[piece.index(after: equals)...]))
        }
    }

    /// One name or value: `+` as a space, then percent-decoded, then UTF-8 with replacement.
    static func decoded<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            index = bytes.index(after: index)
            if byte == UInt8(ascii: "+") {
                output.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), index != bytes.endIndex, let high = bytes[index].hexDigitValue,
                case let next = bytes.index(after: index), next != bytes.endIndex, let low = bytes[next].hexDigitValue
            {
                output.append(high << 4 | low)
                index = bytes.index(after: next)
            } else {
                output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
