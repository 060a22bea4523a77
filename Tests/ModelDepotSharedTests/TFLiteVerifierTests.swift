import Foundation
import ModelDepotShared
import Testing

@Suite struct TFLiteVerifierTests {
    @Test func everyFixtureIsValid() throws {
        let fixtures = try Repository.fixtures()
        #expect(fixtures.count >= 6)
        for fixture in fixtures {
            let inspection = try TFLiteInspection(fileAt: fixture.path)
            #expect(throws: Never.self, "\(fixture.lastPathComponent)") { try inspection.result.get() }
        }
    }

    @Test func classifierIsDescribedInFull() throws {
        let model = try TFLiteVerifier().verify(Repository.bytes(of: Repository.fixture("float_classifier")))
        #expect(model.schemaVersion == 3)
        #expect(model.description == "ModelDepot float32 classifier fixture")
        #expect(model.inputs.map(\.name) == ["image"])
        #expect(model.inputs.first?.type == .float32)
        #expect(model.inputs.first?.shape == [1, 4])
        #expect(model.outputs.map(\.name) == ["probabilities"])
        #expect(model.outputs.first?.shape == [1, 3])
        #expect(model.operators.builtin == ["FULLY_CONNECTED", "SOFTMAX"])
        #expect(model.operators.custom.isEmpty)
        #expect(model.metadata == ["min_runtime_version"])
        #expect(model.signatures.map(\.key) == ["serving_default"])
        #expect(model.appendedDataSize == 0)
    }

    @Test func appendedZipIsReportedNotRejected() throws {
        let plain = try Repository.bytes(of: Repository.fixture("float_classifier"))
        let labelled = try Repository.bytes(of: Repository.fixture("float_classifier_labels"))
        let model = try TFLiteVerifier().verify(labelled)
        #expect(model.flatbufferSize == plain.count)
        #expect(model.appendedDataSize == labelled.count - plain.count)
        #expect(Array(labelled[model.flatbufferSize..<(model.flatbufferSize + 2)]) == Array("PK".utf8))
    }

    @Test func perChannelQuantizationIsReported() throws {
        let model = try TFLiteVerifier().verify(Repository.bytes(of: Repository.fixture("int8_conv")))
        #expect(model.inputs.first?.type == .int8)
        #expect(model.inputs.first?.quantization.scales == [0.5])
        #expect(model.inputs.first?.quantization.zeroPoints == [-1])
    }

    @Test func dynamicDimensionsAppearInTheShapeSignature() throws {
        let model = try TFLiteVerifier().verify(Repository.bytes(of: Repository.fixture("dynamic_batch")))
        #expect(model.inputs.first?.shape == [1, 4])
        #expect(model.inputs.first?.shapeSignature == [-1, 4])
    }

    @Test func fileShorterThanTwelveBytesIsTooSmall() throws {
        let bytes = try Repository.bytes(of: Repository.fixture("float_classifier"))
        #expect(code(of: Array(bytes.prefix(11))) == .modelTooSmall)
        #expect(code(of: []) == .modelTooSmall)
    }

    @Test func fileOfTwoGibibytesIsTooLarge() throws {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("huge.tflite").path
        // A sparse file: 2 GiB long, no disk blocks.
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(TFLiteVerifier.maximumSize))
        try handle.close()
        let file = try MappedFile(path: path)
        #expect(
            throws: DepotError(
                .modelTooLarge, "The file has 2147483648 bytes; TFLite models must be smaller than 2 GiB (2147483648 bytes).")
        ) {
            try file.withBytes { bytes throws(DepotError) in try TFLiteVerifier().verify(bytes) }
        }
    }

    @Test func wrongIdentifierIsNamed() throws {
        var bytes = try Repository.bytes(of: Repository.fixture("float_classifier"))
        bytes.replaceSubrange(4..<8, with: Array("ONNX".utf8))
        let error = try #require(failure(of: bytes))
        #expect(error.code == .wrongFileIdentifier)
        #expect(error.message.contains("\"ONNX\""))
    }

    @Test func otherSchemaVersionIsRejected() throws {
        var bytes = try Repository.bytes(of: Repository.fixture("float_classifier"))
        let model = TestFlatBuffer(bytes)
        let position = try #require(model.fieldPosition(table: model.root, slot: 0))
        bytes.replaceSubrange(position..<(position + 4), with: [2, 0, 0, 0])
        let error = try #require(failure(of: bytes))
        #expect(error.code == .unsupportedSchemaVersion)
        #expect(error.message.contains("Model.version is 2"))
    }

    @Test func truncatedFileIsOutOfBounds() throws {
        let bytes = try Repository.bytes(of: Repository.fixture("float_classifier"))
        let error = try #require(failure(of: Array(bytes.prefix(bytes.count / 2))))
        #expect(error.code == .offsetOutOfBounds)
        #expect(error.message.contains("lies outside the file (\(bytes.count / 2) bytes)"))
    }

    @Test func misalignedRootTableIsRejected() throws {
        var bytes = try Repository.bytes(of: Repository.fixture("float_classifier"))
        bytes[0] &+= 1
        #expect(code(of: bytes) == .misaligned)
    }

    @Test func oddVTableSizeIsInvalid() throws {
        var bytes = try Repository.bytes(of: Repository.fixture("float_classifier"))
        let vtable = TestFlatBuffer(bytes).vtable(of: TestFlatBuffer(bytes).root)
        bytes[vtable] = 5
        bytes[vtable + 1] = 0
        #expect(code(of: bytes) == .invalidVTable)
    }

    @Test func unterminatedStringNamesItsField() throws {
        var bytes = try Repository.bytes(of: Repository.fixture("float_classifier"))
        let text = Array("ModelDepot float32 classifier fixture".utf8)
        let start = try #require(bytes.firstRange(of: text)?.lowerBound)
        bytes[start + text.count] = UInt8(ascii: "!")
        let error = try #require(failure(of: bytes))
        #expect(error.code == .unterminatedString)
        #expect(error.message.hasPrefix("Model.description:"))
    }

    @Test func nestingAndTableLimitsComeFromThePolicy() throws {
        let bytes = try Repository.bytes(of: Repository.fixture("float_classifier"))
        #expect(code(of: bytes, policy: TFLiteVerificationPolicy(maximumDepth: 2)) == .nestingTooDeep)
        #expect(code(of: bytes, policy: TFLiteVerificationPolicy(maximumTables: 3)) == .tooManyTables)
    }

    @Test func expectedInputsAndOutputsAreChecked() throws {
        let model = try TFLiteVerifier().verify(Repository.bytes(of: Repository.fixture("dynamic_batch")))
        let matching = TFLiteIOExpectation(
            inputs: [.init(index: 0, type: .float32, shape: [-1, 4])],
            outputs: [.init(index: 0, type: .float32, shape: [1, 4])])
        try matching.check(model)
        let wrongType = TFLiteIOExpectation(inputs: [.init(index: 0, type: .uint8, shape: [1, 4])])
        #expect(
            throws: DepotError(
                .signatureMismatch,
                "The app expects input 0 as uint8 [1, 4], but the model's input 0 ('input') is float32 [-1, 4]. Update the app's expectation or upload a matching model."
            )
        ) {
            try wrongType.check(model)
        }
        let missing = TFLiteIOExpectation(outputs: [.init(index: 1, type: .float32, shape: [1, 4])])
        #expect(throws: DepotError(.signatureMismatch, "The app expects output 1, but the model has 1 outputs.")) {
            try missing.check(model)
        }
    }
}

func failure(of bytes: [UInt8], policy: TFLiteVerificationPolicy = .default) -> DepotError? {
    do {
        _ = try TFLiteVerifier(policy: policy).verify(bytes)
        return nil
    } catch {
        return error
    }
}

func code(of bytes: [UInt8], policy: TFLiteVerificationPolicy = .default) -> DepotError.Code? {
    failure(of: bytes, policy: policy)?.code
}
