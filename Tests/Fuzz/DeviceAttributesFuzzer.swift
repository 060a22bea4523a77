// libFuzzer entry point for `Depot-Attributes` decoding; built and run by scripts/fuzz.

/// Decodes one header value; what decodes must encode and decode back to the same attributes
/// (unless the encoding, whose escapes take more bytes, is over the length limit).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDeviceAttributes(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let header = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let attributes = try? DeviceAttributes.decode(header), let encoded = DeviceAttributes.encode(attributes),
        encoded.utf8.count <= DeviceAttributes.maximumLength
    else { return 0 }
    let again = try? DeviceAttributes.decode(encoded)
    precondition(again == attributes, "'\(encoded)' does not decode back to \(attributes)")
    return 0
}
