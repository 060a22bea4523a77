import Foundation

// libFuzzer entry point for applying a patch (what a device does with bytes a server sent);
// built and run by scripts/fuzz.

/// The old file every input patches: 512 bytes of a pattern (the seeds are patches from it).
let fuzzOld = (0..<512).map { UInt8(truncatingIfNeeded: $0 &* 7) }
let fuzzDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("patch-fuzz-\(getpid())")

/// The new size a patch claims (bytes 16..<24 of its header), when it claims one up to 64 KiB.
func claimedSize(_ patch: UnsafeRawBufferPointer) -> Int {
    guard patch.count >= 24 else { return 0 }
    var claimed: UInt64 = 0
    for index in 16..<24 { claimed |= UInt64(patch[index]) << (8 * UInt64(index - 16)) }
    return claimed <= 1 << 16 ? Int(claimed) : 100
}

/// Applies `patch` to `fuzzOld` into `handle`; the refusal, or `nil`.
func applied(_ patch: UnsafeRawBufferPointer, newSize: Int, into handle: FileHandle) -> DepotError? {
    let old = UnsafeMutableRawBufferPointer.allocate(byteCount: fuzzOld.count, alignment: 1)
    old.copyBytes(from: fuzzOld)
    let result = Result { () throws(DepotError) in
        try Patch.apply(patch, to: UnsafeRawBufferPointer(old), newSize: newSize, output: handle, temporaryDirectory: fuzzDirectory)
    }
    old.deallocate()
    if case .failure(let error) = result { return error }
    return nil
}

/// Applies the input as a patch: it must apply to the size it claims, or be refused as
/// `invalid_patch`, and leave no temporary file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPatchApply(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    try? FileManager.default.createDirectory(at: fuzzDirectory, withIntermediateDirectories: true)
    let patch = UnsafeRawBufferPointer(start: data, count: size)
    let newSize = claimedSize(patch)
    let output = fuzzDirectory.appendingPathComponent("new")
    guard FileManager.default.createFile(atPath: output.path, contents: nil), let handle = FileHandle(forWritingAtPath: output.path) else {
        return 0
    }
    let refusal = applied(patch, newSize: newSize, into: handle)
    try? handle.close()
    if let refusal {
        precondition(refusal.code == .invalidPatch, "refused with \(refusal.code), not invalid_patch: \(refusal.message)")
    } else {
        let written = (try? FileManager.default.attributesOfItem(atPath: output.path)[.size] as? NSNumber)?.intValue
        precondition(written == newSize, "an applied patch wrote \(written ?? -1) bytes, not \(newSize)")
    }
    let left = (try? FileManager.default.contentsOfDirectory(atPath: fuzzDirectory.path)) ?? []
    precondition(left == ["new"], "temporary files left: \(left)")
    return 0
}
