import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// `depot versions` prints what a stored version brings (its metadata name, tensor and label file
/// names, the uploader's notes) with control characters as visible escapes, in the list and in
/// the full view; `--json` keeps the strings as they are.
@Suite struct VersionsOutputEscapingEndToEndTests {
    @Test func versionsPrintsAStoredModelsStringsEscaped() async throws {
        let scratch = try Scratch()
        let server = try await ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        let env = server.environment
        let model = scratch.url.appendingPathComponent("hostile.tflite")
        let original = try Data(contentsOf: URL(fileURLWithPath: Binaries.fixture("metadata/described_classifier")))
        try Data(HostileModelStrings.apply(to: Array(original))).write(to: model)
        await #expect(try Command.depot(["models", "create", "terminal"], environment: env).status == 0)
        let upload = try await Command.depot(["upload", "terminal", model.path, "--notes", "\u{1B}[31mred\u{07}"], environment: env)
        #expect(upload.status == 0, "\(upload.error)")

        let list = try await Command.depot(["versions", "terminal"], environment: env)
        let full = try await Command.depot(["versions", "terminal", "1"], environment: env)
        for output in [list, full] {
            #expect(output.status == 0, "\(output.error)")
            #expect(!output.output.contains(0x1B), "a raw ESC byte was printed: \(output.text)")
            #expect(!output.output.contains(0x07), "a raw BEL byte was printed: \(output.text)")
            #expect(!output.text.unicodeScalars.contains("\u{202E}"), "a raw right-to-left override was printed")
            #expect(output.text.contains(#"\e[31mred\u{7}"#), "the notes are not shown escaped: \(output.text)")
            #expect(output.text.contains(#"\e[2J\e[31mDescribed c"#), "the metadata name is not shown escaped: \(output.text)")
        }
        #expect(full.text.contains(#"\u{202E}feats  float32 [1, 4]"#), "\(full.text)")

        let json = try await Command.depot(["versions", "terminal", "1", "--json"], environment: env).decode(ModelVersion.self)
        #expect(json.notes == "\u{1B}[31mred\u{07}")
        #expect(json.tflite.modelMetadata?.name == "\u{1B}[2J\u{1B}[31mDescribed c")
    }
}
