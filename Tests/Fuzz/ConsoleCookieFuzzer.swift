// libFuzzer entry point for the console's session cookie; built and run by scripts/fuzz.

/// Reads `Cookie` header values (split at NUL bytes) as the console does; a session whose id is
/// not 64 lower-case hex digits is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConsoleCookie(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let headers = UnsafeBufferPointer(start: data, count: size).split(separator: 0, omittingEmptySubsequences: false)
        .map { String(decoding: $0, as: UTF8.self) }
    guard let value = ConsoleSession.cookieValue(inHeaders: headers), let session = ConsoleSession(cookieValue: value) else { return 0 }
    precondition(
        session.id.utf8.count == 64 && session.id.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) },
        "session id '\(session.id)'")
    _ = session.accepts(csrf: String(value))
    return 0
}
