import Crypto
import Foundation
import ModelDepotShared

/// How fast a device applies a patch: `Patch.apply` from the mapped old file and the mapped
/// patch into a temporary file (written to disk, as the SDK does), the best of 5 runs.
enum PatchBenchmark {
    static func apply(old: String, patch: String, newSize: Int) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("patch-apply-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("new")
        var best = Double.infinity
        for _ in 0..<5 {
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            let handle = try FileHandle(forWritingTo: output)
            let start = ContinuousClock.now
            try MappedFile(path: patch).withBytes { (patchBytes) throws(DepotError) in
                try MappedFile(path: old).withBytes { (oldBytes) throws(DepotError) in
                    try Patch.apply(patchBytes, to: oldBytes, newSize: newSize, output: handle, temporaryDirectory: directory)
                }
            }
            try handle.close()
            let elapsed = ContinuousClock.now - start
            best = min(best, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
        let digest = try SHA256.digest(ofFileAt: output.path).hex
        print(
            String(
                format: "{\"seconds\": %.6f, \"megabytesPerSecond\": %.1f, \"sha256\": \"%@\"}", best, Double(newSize) / 1e6 / best, digest)
        )
    }
}
