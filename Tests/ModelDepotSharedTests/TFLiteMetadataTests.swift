import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// TFLite Model Metadata and the zip of associated files, read by the pure-Swift verifier, against
/// tflite-support 0.4.4's `MetadataDisplayer` on real MediaPipe models and the generated fixtures.
@Suite struct TFLiteMetadataTests {
    static func inspectionJSON(of model: URL) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(try TFLiteInspection(fileAt: model.path))
    }

    /// Runs compare_metadata.py on (our JSON, model) pairs; returns its lines by model file name.
    static func compare(_ pairs: [(json: Data, model: URL)], in directory: TemporaryDirectory) async throws -> (
        status: Int32, lines: [String: String]
    ) {
        var arguments = [Repository.tfliteScripts.appendingPathComponent("compare_metadata.py").path]
        for (index, pair) in pairs.enumerated() {
            let path = directory.url.appendingPathComponent("ours-\(index).json")
            try pair.json.write(to: path)
            arguments += [path.path, pair.model.path]
        }
        let output = try await Program.run(Repository.referencePython, arguments)
        var lines: [String: String] = [:]
        for line in output.text.split(separator: "\n") {
            let words = line.split(separator: " ", maxSplits: 2)
            guard words.count >= 2 else { continue }
            lines[URL(fileURLWithPath: String(words[1])).lastPathComponent] = String(line)
        }
        #expect(output.error.isEmpty || output.status == 0, "\(output.error)")
        return (output.status, lines)
    }

    @Test func metadataEqualsMetadataDisplayerFieldByField() async throws {
        let real = try Repository.models(in: Repository.realModels)
        #expect(real.count == 4, "run scripts/bootstrap to fetch the real models")
        let models = real + (try Repository.models(in: Repository.metadataFixtures))
        let directory = try TemporaryDirectory()
        let result = try await Self.compare(try models.map { (try Self.inspectionJSON(of: $0), $0) }, in: directory)
        #expect(result.status == 0)
        #expect(result.lines.count == models.count)
        for model in models {
            let line = try #require(result.lines[model.lastPathComponent], "no result for \(model.lastPathComponent)")
            #expect(line.hasPrefix("equal "), "\(line)")
        }
        #expect(result.lines["described_classifier.tflite"]?.contains("fields=58 files=4") == true)
    }

    @Test func comparisonFindsAChangedField() async throws {
        let model = Repository.metadataFixtures.appendingPathComponent("described_classifier.tflite")
        let ours = String(decoding: try Self.inspectionJSON(of: model), as: UTF8.self)
            .replacingOccurrences(of: "\"labels_fr.txt\"", with: "\"labels_de.txt\"")
        let result = try await Self.compare([(Data(ours.utf8), model)], in: try TemporaryDirectory())
        #expect(result.status == 1)
        #expect(result.lines["described_classifier.tflite"]?.contains("labels_de.txt") == true)
    }

    @Test func describedClassifierIsReadInFull() throws {
        let bytes = try Repository.bytes(of: Repository.metadataFixtures.appendingPathComponent("described_classifier.tflite"))
        let model = try TFLiteVerifier().verify(bytes)
        let metadata = try #require(model.modelMetadata)
        #expect(metadata.name == "Described classifier")
        #expect(metadata.version == "v3")
        #expect(metadata.author == "ModelDepot")
        #expect(metadata.license == "Apache-2.0")
        let subgraph = try #require(metadata.subgraphs.first)
        let input = try #require(subgraph.inputs.first)
        #expect(input.normalization?.mean == [0.5])
        #expect(input.normalization?.std == [2.0])
        #expect(input.dimensionNames == ["batch", "feature"])
        #expect(input.content?.properties == .feature)
        let output = try #require(subgraph.outputs.first)
        #expect(output.scoreThreshold == 0.25)
        #expect(output.hasScoreCalibration)
        #expect(output.content?.range == TFLiteValueRange(min: 1, max: 2))
        #expect(output.labelFiles.map(\.locale) == ["en", "fr"])
        #expect(subgraph.customMetadata.first?.data == Array("\u{1}\u{2}\u{3} ModelDepot".utf8))
        #expect(model.packedFiles?.map(\.name) == ["labels_en.txt", "labels_fr.txt", "calibration.csv", "README.txt"])
        #expect(model.packedFiles?.allSatisfy(\.deflated) == true)
        // A blank line is an empty label and "\r" stays, as the Task Library reads label files.
        #expect(model.labelFiles.map(\.labels) == [["daisy", "rose", "", "tulip\r"], ["marguerite", "rose", "tulipe"]])
        #expect(model.labelFiles.allSatisfy { $0.output == 0 && $0.type == .tensorAxisLabels })
    }

    @Test func storedDescriptionsWithoutMetadataStillDecode() throws {
        let bytes = try Repository.bytes(of: Repository.metadataFixtures.appendingPathComponent("object_detector.tflite"))
        let model = try TFLiteVerifier().verify(bytes)
        var json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(model)) as! [String: Any]
        #expect(try JSONDecoder().decode(TFLiteModelDescription.self, from: JSONEncoder().encode(model)) == model)
        for key in ["modelMetadata", "packedFiles", "labelFiles"] { json.removeValue(forKey: key) }
        let old = try JSONDecoder().decode(TFLiteModelDescription.self, from: JSONSerialization.data(withJSONObject: json))
        #expect(old.modelMetadata == nil)
        #expect(old.labelFiles.isEmpty)
        #expect(old.subgraphs == model.subgraphs)
    }

    static let invalid: [(file: String, code: DepotError.Code, mentions: String)] = [
        ("metadata_wrong_identifier", .invalidModelMetadata, "is \"M002\", not \"M001\""),
        ("metadata_input_count_mismatch", .invalidModelMetadata, "describes 2 inputs, but the subgraph has 1"),
        ("metadata_zero_std", .invalidModelMetadata, "std [0.0]"),
        ("associated_file_missing", .associatedFileMissing, "'labels.txt'"),
        ("zip_crc_mismatch", .invalidAssociatedFiles, "'labels.txt' has CRC-32"),
        ("zip_truncated", .invalidAssociatedFiles, "no end record"),
        ("zip_damaged_deflate", .invalidAssociatedFiles, "'labels.txt' does not inflate"),
    ]

    @Test func everyInvalidMetadataFixtureHasAnExpectation() throws {
        let files = try Repository.models(in: Repository.metadataFixtures.appendingPathComponent("invalid"))
        #expect(Set(files.map { $0.deletingPathExtension().lastPathComponent }) == Set(Self.invalid.map(\.file)))
    }

    @Test(arguments: invalid)
    func metadataDefectIsNamed(file: String, code: DepotError.Code, mentions: String) throws {
        let bytes = try Repository.bytes(of: Repository.metadataFixtures.appendingPathComponent("invalid/\(file).tflite"))
        let error = try #require(failure(of: bytes), "\(file) was accepted")
        #expect(error.code == code, "\(error.message)")
        #expect(error.message.contains(mentions), "\(error.message)")
    }

    @Test func zipFeaturesThisReaderRefusesAreNamed() throws {
        // object_detector.tflite's zip holds one stored entry; its central directory entry is
        // changed to name another compression method, then to be encrypted.
        let bytes = try Repository.bytes(of: Repository.metadataFixtures.appendingPathComponent("object_detector.tflite"))
        let directory = try #require((0..<(bytes.count - 4)).last { bytes[$0..<($0 + 4)] == [0x50, 0x4B, 0x01, 0x02] })
        var bzip2 = bytes
        bzip2[directory + 10] = 12
        let method = try #require(failure(of: bzip2))
        #expect(method.code == .invalidAssociatedFiles)
        #expect(method.message.contains("compression method 12"), "\(method.message)")
        var encrypted = bytes
        encrypted[directory + 8] |= 1
        let secret = try #require(failure(of: encrypted))
        #expect(secret.message.contains("is encrypted"), "\(secret.message)")
        var zip64 = bytes
        for offset in 20..<24 { zip64[directory + offset] = 0xFF }
        #expect(try #require(failure(of: zip64)).message.contains("ZIP64"))
    }

    @Test(arguments: try Repository.models(in: Repository.metadataFixtures))
    func pagedVerificationReadsTheSameMetadata(fixture: URL) throws {
        let bytes = try Repository.bytes(of: fixture)
        let pages = PagedBytes(count: bytes.count, pageSize: 256, capacity: 2) { offset, count in Array(bytes[offset..<(offset + count)]) }
        #expect(try TFLiteVerifier().verify(pages) == TFLiteVerifier().verify(bytes))
    }
}
