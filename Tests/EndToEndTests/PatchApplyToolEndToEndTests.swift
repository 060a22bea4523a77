import Foundation
import TestSupport
import Testing

/// `depot-benchmark patch-apply`, which `scripts/bench/delta` runs on every patch it measures: a
/// patch that cannot apply ends the tool with its error and status 1, never a trap.
@Suite struct PatchApplyToolEndToEndTests {
    static let tool = Binaries.depot.deletingLastPathComponent().appendingPathComponent("depot-benchmark")

    @Test func aPatchThatCannotApplyEndsTheToolWithItsError() async throws {
        let scratch = try Scratch()
        let old = Binaries.fixture("float_classifier")
        let garbage = scratch.path("garbage.patch")
        try Data((0..<4_096).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: garbage))
        let cases: [(patch: String, size: String, message: String)] = [
            (garbage, "1000", "The patch is not valid: it does not start with a patch header"),
            (scratch.path("missing.patch"), "1000", "missing.patch"),
            (garbage, String(Int.max), "The patch is not valid"),
        ]
        for (patch, size, message) in cases {
            let output = try await Program.run(Self.tool, ["patch-apply", old, patch, size])
            #expect(output.status == 1 && output.error.contains("depot-benchmark: ") && output.error.contains(message), "\(output.error)")
        }
    }
}
