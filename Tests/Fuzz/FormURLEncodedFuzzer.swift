// libFuzzer entry point for the console's form parser; built and run by scripts/fuzz.

/// Parses one form body; a pair that cannot come from it (more pairs than pieces, a name or
/// value longer than the body) is a finding, and a body written back from the pairs must parse to
/// the same pairs.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFormURLEncoded(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = UnsafeBufferPointer(start: data, count: size)
    let pairs = FormURLEncoded.pairs(body)
    precondition(pairs.count <= body.count { $0 == UInt8(ascii: "&") } + 1, "\(pairs.count) pairs")
    let written = pairs.map { escaped($0.name) + "=" + escaped($0.value) }.joined(separator: "&")
    let again = FormURLEncoded.pairs(Array(written.utf8))
    precondition(again.map(\.name) == pairs.map(\.name) && again.map(\.value) == pairs.map(\.value), "'\(written)' parses differently")
    return 0
}

/// Every byte but letters and digits as `%XY`.
private func escaped(_ text: String) -> String {
    text.utf8.map { byte in
        (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
            ? String(UnicodeScalar(byte)) : "%" + String(byte, radix: 16, uppercase: true).leftPadded
    }.joined()
}

private extension String {
    var leftPadded: String { count == 1 ? "0" + self : self }
}
