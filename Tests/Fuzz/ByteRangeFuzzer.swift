// libFuzzer entry point for `Range` header parsing; built and run by scripts/fuzz.

/// The first 8 bytes are the file's length, the rest the header; a range outside the file is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzByteRange(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let length = bytes.prefix(8).reduce(0) { $0 << 8 | Int($1) } & Int.max
    let header = String(decoding: bytes.dropFirst(8), as: UTF8.self)
    if case .partial(let range) = ByteRange(header: header, length: length) {
        precondition(range.lowerBound >= 0 && range.upperBound < length, "range \(range) outside a file of \(length) bytes")
    }
    return 0
}
