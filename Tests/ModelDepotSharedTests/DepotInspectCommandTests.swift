import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// `depot inspect`, run as the real executable.
@Suite struct DepotInspectCommandTests {
    struct Report: Decodable {
        struct Subgraph: Decodable {
            let name: String
            let inputs: [TFLiteTensor]
            let outputs: [TFLiteTensor]
        }

        struct Signature: Decodable {
            let key: String
            let inputs: [String]
            let outputs: [String]
        }

        let sha256: String
        let size: Int
        let schemaVersion: Int?
        let flatbufferSize: Int?
        let appendedDataSize: Int?
        let subgraphs: [Subgraph]?
        let signatures: [Signature]?
        let operators: TFLiteOperators?
        let metadata: [String]?
        let valid: Bool
        let error: String?
    }

    func inspect(_ arguments: [String]) async throws -> Program.Output {
        try await Program.run(Repository.depotExecutable, ["inspect"] + arguments)
    }

    @Test func jsonReportUsesTheDocumentedNames() async throws {
        let fixture = Repository.fixture("float_classifier_labels")
        let output = try await inspect([fixture.path, "--json"])
        #expect(output.status == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: output.output) as? [String: Any])
        #expect(
            Set(json.keys).isSuperset(of: [
                "sha256", "size", "schemaVersion", "flatbufferSize", "appendedDataSize",
                "subgraphs", "signatures", "operators", "metadata", "valid", "error",
            ]))
        let report = try JSONDecoder().decode(Report.self, from: output.output)
        let digest = try await Program.run("sha256sum", [fixture.path]).text
        #expect(digest.hasPrefix(report.sha256))
        #expect(report.size == 1127)
        #expect(report.valid)
        #expect(report.error == nil)
        #expect(report.appendedDataSize == report.size - (report.flatbufferSize ?? 0))
        #expect(report.subgraphs?.first?.inputs.first?.name == "image")
        #expect(report.signatures?.first?.key == "serving_default")
        #expect(report.operators?.builtin == ["FULLY_CONNECTED", "SOFTMAX"])
        #expect(report.metadata == ["min_runtime_version"])
    }

    @Test func tensorTypesAreSpelledAsLiteRTSpellsThem() async throws {
        let output = try await inspect([Repository.fixture("uint8_two_in_two_out").path, "--json"])
        let text = output.text
        #expect(text.contains("\"type\" : \"uint8\""))
        #expect(text.contains("\"zeroPoints\" : ["))
    }

    @Test func invalidModelExitsOneWithTheReason() async throws {
        let directory = try TemporaryDirectory()
        var bytes = try Repository.bytes(of: Repository.fixture("float_classifier"))
        bytes.replaceSubrange(4..<8, with: Array("XXXX".utf8))
        let file = directory.url.appendingPathComponent("broken.tflite")
        try Data(bytes).write(to: file)

        let text = try await inspect([file.path])
        #expect(text.status == 1)
        #expect(text.error.contains("is not a valid TFLite model: Bytes 4..<8 are \"XXXX\""))

        let json = try await inspect([file.path, "--json"])
        #expect(json.status == 1)
        let report = try JSONDecoder().decode(Report.self, from: json.output)
        #expect(!report.valid)
        #expect(report.error?.contains("not the TFLite identifier") == true)
        #expect(report.subgraphs == nil)
        #expect(report.size == bytes.count)
    }

    @Test func missingFileExitsOneNamingThePath() async throws {
        let output = try await inspect(["/nonexistent/model.tflite"])
        #expect(output.status == 1)
        #expect(output.error.contains("Could not open '/nonexistent/model.tflite': No such file or directory"))
    }

    @Test func humanReadableOutputListsInputsOutputsAndOperators() async throws {
        let output = try await inspect([Repository.fixture("int8_conv").path])
        #expect(output.status == 0)
        #expect(output.text.contains("[0] input  int8 [1, 4, 4, 2]  scale 0.5 zero point -1"))
        #expect(output.text.contains("operators: CONV_2D"))
    }

    @Test func builtinOnlyRejectsCustomOperators() async throws {
        let output = try await inspect([
            Repository.tfliteFixtures.appendingPathComponent("policy/custom_operator.tflite").path, "--builtin-only",
        ])
        #expect(output.status == 1)
        #expect(output.error.contains("custom operator 'MyCustomSoftmax'"))
    }
}
