import Foundation
import ModelDepotShared
import Testing

/// Each file under Tests/Fixtures/tflite/invalid has exactly one defect (see its README.md);
/// the verifier names it with its own code and says where it is.
@Suite struct TFLiteInvalidModelTests {
    static let expectations: [(file: String, code: DepotError.Code, mentions: String)] = [
        ("no_subgraphs", .noSubgraphs, "Model.subgraphs is empty"),
        ("tensor_buffer_out_of_range", .indexOutOfRange, ".buffer is 99"),
        ("opcode_index_out_of_range", .indexOutOfRange, "Model.subgraphs[0].operators[0].opcodeIndex is 7"),
        ("operator_input_out_of_range", .indexOutOfRange, "Model.subgraphs[0].operators[0].inputs[0] is 42"),
        ("operator_output_optional", .optionalTensorNotAllowed, ".outputs[0] is -1"),
        ("subgraph_input_out_of_range", .indexOutOfRange, "Model.subgraphs[0].inputs[0] is 17"),
        ("tensor_input_and_output", .tensorIsInputAndOutput, "uses tensor 4 as both an input and an output"),
        ("negative_dimension", .invalidShape, ".shape[1] is -4"),
        ("shape_signature_rank_mismatch", .invalidShape, "shapeSignature [-1] does not fit shape [1, 4]"),
        ("tensor_size_overflow", .tensorSizeOverflow, "Model.subgraphs[0].tensors[5]"),
        ("tensor_size_overflow_int2", .tensorSizeOverflow, "Model.subgraphs[0].tensors[5]"),
        ("constant_data_mismatch", .constantDataMismatch, "which needs 48 bytes, but its buffer"),
        ("unknown_tensor_type", .unknownTensorType, ".type is 99"),
        ("quantization_count_mismatch", .invalidQuantization, "has 2 scales and 1 zero points"),
        ("per_channel_dimension_mismatch", .invalidQuantization, "3 per-channel scales along dimension 1"),
        ("external_buffer_out_of_bounds", .externalBufferOutOfBounds, "Model.buffers[4] points to 16 bytes at file offset 1099511627776"),
        ("signature_tensor_out_of_range", .indexOutOfRange, "Model.signatureDefs[0].outputs[0].tensorIndex is 50"),
        ("signature_subgraph_out_of_range", .indexOutOfRange, "Model.signatureDefs[0].subgraphIndex is 3"),
        ("metadata_buffer_out_of_range", .indexOutOfRange, "Model.metadata[0].buffer is 77"),
        ("negative_operator_code", .invalidOperatorCode, "has builtin code -5"),
        ("custom_operator_without_name", .invalidOperatorCode, "custom operator without a name"),
        ("control_flow_subgraph_out_of_range", .indexOutOfRange, "builtinOptions.bodySubgraphIndex is 9"),
    ]

    @Test func everyInvalidFixtureHasAnExpectation() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Repository.tfliteFixtures.appendingPathComponent("invalid").path)
            .filter { $0.hasSuffix(".tflite") }.map { String($0.dropLast(".tflite".count)) }
        #expect(Set(files) == Set(Self.expectations.map(\.file)))
    }

    @Test(arguments: expectations)
    func defectIsNamed(file: String, code: DepotError.Code, mentions: String) throws {
        let bytes = try Repository.bytes(of: Repository.tfliteFixtures.appendingPathComponent("invalid/\(file).tflite"))
        let error = try #require(failure(of: bytes), "\(file) was accepted")
        #expect(error.code == code, "\(error.message)")
        #expect(error.message.contains(mentions), "\(error.message)")
    }

    @Test func policyDecidesOnCustomFlexAndSparse() throws {
        let policyFixture = { (name: String) in
            try Repository.bytes(of: Repository.tfliteFixtures.appendingPathComponent("policy/\(name).tflite"))
        }
        let custom = try policyFixture("custom_operator")
        let flex = try policyFixture("flex_operator")
        let sparse = try policyFixture("sparse_tensor")

        #expect(try TFLiteVerifier().verify(custom).operators.custom == ["MyCustomSoftmax"])
        #expect(try TFLiteVerifier().verify(flex).operators.custom == ["FlexSoftmax"])
        _ = try TFLiteVerifier().verify(sparse)

        #expect(code(of: custom, policy: .builtinOperatorsOnly) == .customOperatorNotAllowed)
        #expect(code(of: flex, policy: TFLiteVerificationPolicy(allowsFlexOperators: false)) == .flexOperatorNotAllowed)
        #expect(code(of: custom, policy: TFLiteVerificationPolicy(allowsFlexOperators: false)) == nil)
        #expect(code(of: sparse, policy: .builtinOperatorsOnly) == .sparseTensorNotAllowed)
    }
}
