// libFuzzer entry point for `X-Forwarded-For` and `X-Forwarded-Proto`; built and run by scripts/fuzz.

private let proxies = TrustedProxies(["127.0.0.1/32", "10.0.0.0/8", "fd00::/8"].map { try! AddressRange($0) })

/// The bytes before the first NUL are `X-Forwarded-For`, the rest `X-Forwarded-Proto`, from a
/// trusted peer; a client address that is neither the peer nor an address is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzForwardedFor(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let parts = UnsafeBufferPointer(start: data, count: size).split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
    let forwardedFor = String(decoding: parts[0], as: UTF8.self)
    let forwardedProto = parts.count > 1 ? String(decoding: parts[1], as: UTF8.self) : nil
    let client = proxies.client(peer: "127.0.0.1", forwardedFor: forwardedFor, forwardedProto: forwardedProto)
    precondition(
        client.address == "127.0.0.1" || client.address.flatMap { AddressRange.bytes($0) } != nil,
        "client address '\(client.address ?? "nil")'")
    return 0
}
