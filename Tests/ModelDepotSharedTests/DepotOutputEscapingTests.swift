import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// Strings a model brings (metadata, tensor and file names, labels) reach the operator's terminal
/// only escaped: `depot inspect` prints escape sequences, line breaks and bidirectional overrides
/// as visible text, while `--json` stays JSON that decodes to the model's own strings.
@Suite struct DepotOutputEscapingTests {
    static func hostileModel(in directory: TemporaryDirectory) throws -> URL {
        let bytes = try Repository.bytes(of: Repository.metadataFixtures.appendingPathComponent("described_classifier.tflite"))
        let url = directory.url.appendingPathComponent("hostile.tflite")
        try Data(HostileModelStrings.apply(to: bytes)).write(to: url)
        return url
    }

    @Test func inspectPrintsControlCharactersOfTheModelAsVisibleEscapes() async throws {
        let directory = try TemporaryDirectory()
        let model = try Self.hostileModel(in: directory)
        // Given a valid model whose strings hold escape sequences
        let described = try TFLiteVerifier().verify(try Repository.bytes(of: model))
        #expect(described.modelMetadata?.name == "\u{1B}[2J\u{1B}[31mDescribed c")
        // When inspected
        let output = try await Program.run(Repository.depotExecutable, ["inspect", model.path])
        // Then no control byte reaches the terminal, and each one is shown
        #expect(output.status == 0, "\(output.error)")
        #expect(!output.output.contains(0x1B), "a raw ESC byte was printed")
        #expect(!output.output.contains(0x07), "a raw BEL byte was printed")
        #expect(!output.text.unicodeScalars.contains("\u{202E}"), "a raw right-to-left override was printed")
        #expect(output.text.contains(#"model metadata: "\e[2J\e[31mDescribed c" v3"#), "\(output.text)")
        #expect(output.text.contains(#"labels of output 0 (\e]0;own\u{7}a.txt, en)"#), "\(output.text)")
        #expect(output.text.contains(#"[0] \u{202E}feats  float32 [1, 4]"#), "\(output.text)")
        #expect(output.text.contains(#"input 0 "\u{202E}feats""#), "\(output.text)")
        #expect(output.text.contains(#"associated files: \e]0;own\u{7}a.txt (19 bytes, deflated)"#), "\(output.text)")
    }

    /// The part of `depot inspect --json` these tests read.
    struct Report: Decodable {
        let modelMetadata: TFLiteModelMetadata
        let labelFiles: [TFLiteLabelFile]
    }

    @Test func inspectJSONKeepsTheModelsStringsAsJSON() async throws {
        let directory = try TemporaryDirectory()
        let model = try Self.hostileModel(in: directory)
        let output = try await Program.run(Repository.depotExecutable, ["inspect", model.path, "--json"])
        #expect(output.status == 0, "\(output.error)")
        #expect(!output.output.contains(0x1B), "JSON escapes control characters itself")
        let report = try JSONDecoder().decode(Report.self, from: output.output)
        #expect(report.modelMetadata.name == "\u{1B}[2J\u{1B}[31mDescribed c")
        #expect(report.labelFiles.first?.name == "\u{1B}]0;own\u{07}a.txt")
    }
}
