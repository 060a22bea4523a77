// libFuzzer entry point for the TFLite verifier; built and run by scripts/fuzz.

/// Verifies one fuzzer-made input; any crash, hang or out-of-bounds read is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTFLiteVerifier(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = try? TFLiteVerifier().verify(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
