// libFuzzer entry point for the versions rollout conditions compare (`Depot-App-Version`,
// `Depot-OS-Version`, `Depot-SDK-Version`, and the rules' own); built and run by scripts/fuzz.

/// The bytes up to the first 0 are one version, the rest another. A trap is a finding, and so is
/// a parsed number outside 0...999,999,999 or an order that is not total and antisymmetric.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSemanticVersion(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let split = bytes.firstIndex(of: 0) ?? bytes.count
    let texts = [bytes[..<split], bytes[min(split + 1, bytes.count)...]].map { String(decoding: $0, as: UTF8.self) }
    let versions = texts.compactMap { try? SemanticVersion($0) }
    for version in versions {
        precondition(version.numbers.count == 3 && version.numbers.allSatisfy { (0...999_999_999).contains($0) }, "\(version.numbers)")
    }
    if versions.count == 2 {
        let (a, b) = (versions[0], versions[1])
        let holds = [a < b, b < a, a == b].filter { $0 }.count
        precondition(holds == 1, "'\(a)' and '\(b)': exactly one of <, > and == holds, not \(holds)")
    }
    return 0
}
