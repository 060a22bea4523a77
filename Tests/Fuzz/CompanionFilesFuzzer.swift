// libFuzzer entry point for `Depot-Companion-Files` parsing; built and run by scripts/fuzz.

/// Parses one header value; what parses must be written and parsed back to the same files.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCompanionFiles(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let header = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let files = try? CompanionFile.files(fromHeader: header) else { return 0 }
    precondition(files.allSatisfy { (0...CompanionFile.maximumSize).contains($0.size) }, "a size outside 0...\(CompanionFile.maximumSize)")
    let again = try? CompanionFile.files(fromHeader: CompanionFile.header(files))
    precondition(again == files, "'\(CompanionFile.header(files))' does not parse back to \(files)")
    return 0
}
