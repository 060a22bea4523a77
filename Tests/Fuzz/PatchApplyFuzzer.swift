import Foundation

// libFuzzer entry point for applying a patch (what a device does with bytes a server sent);
// built and run by scripts/fuzz.

/// The old file every input patches: 512 bytes of a pattern (the seeds are patches from it).
let fuzzOld = (0..<512).map { UInt8(truncatingIfNeeded: $0 &* 7) }
let fuzzDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("patch-fuzz-\(getpid())")

/// Applies the input as a patch to `fuzzOld` for the new size its header claims (when it claims
/// one up to 64 KiB): it must apply, or be refused as `invalid_patch`, and leave no temporary file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPatchApply(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    try? FileManager.default.createDirectory(at: fuzzDirectory, withIntermediateDirectories: true)
    let patch = UnsafeRawBufferPointer(start: data, count: size)
    let claimed = size >= 24 ? (16..<24).reduce(0) { $0 | UInt64(patch[$1]) << (8 * UInt64($1 - 16)) } : 0
    let newSize = claimed <= 1 << 16 ? Int(claimed) : 100
    let output = fuzzDirectory.appendingPathComponent("new")
    FileManager.default.createFile(atPath: output.path, contents: nil)
    guard let handle = FileHandle(forWritingAtPath: output.path) else { return 0 }
    defer { try? handle.close() }
    do {
        try fuzzOld.withUnsafeBytes { old throws(DepotError) in
            try Patch.apply(patch, to: old, newSize: newSize, output: handle, temporaryDirectory: fuzzDirectory)
        }
        try handle.synchronize()
        let written = (try? FileManager.default.attributesOfItem(atPath: output.path)[.size] as? NSNumber)?.intValue
        precondition(written == newSize, "an applied patch wrote \(written ?? -1) bytes, not \(newSize)")
    } catch let error as DepotError {
        precondition(error.code == .invalidPatch, "refused with \(error.code), not invalid_patch: \(error.message)")
    } catch {
        preconditionFailure("\(error)")
    }
    let left = (try? FileManager.default.contentsOfDirectory(atPath: fuzzDirectory.path)) ?? []
    precondition(left == ["new"], "temporary files left: \(left)")
    return 0
}
