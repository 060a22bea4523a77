import Foundation
import ModelDepotShared
import Testing

/// The inspector reports exactly what real LiteRT reports for each fixture.
@Suite struct TFLiteLiteRTAgreementTests {
    @Test(arguments: try Repository.fixtures())
    func inspectorAgreesWithLiteRT(fixture: URL) async throws {
        let ours = try TFLiteVerifier().verify(Repository.bytes(of: fixture))
        let theirs = try await LiteRT.describe(fixture)

        #expect(ours.inputs.count == theirs.inputs.count)
        #expect(ours.outputs.count == theirs.outputs.count)
        for (mine, reference) in zip(ours.inputs + ours.outputs, theirs.inputs + theirs.outputs) {
            #expect(mine.index == reference.index)
            #expect(mine.name == reference.name)
            #expect(mine.type.name == reference.type)
            #expect(mine.shape == reference.shape)
            #expect(mine.shapeSignature == reference.shapeSignature)
            #expect(mine.quantization.scales == reference.quantization.scales)
            #expect(mine.quantization.zeroPoints == reference.quantization.zeroPoints)
            #expect(mine.quantization.quantizedDimension == reference.quantization.quantizedDimension)
        }

        #expect(ours.signatures.map(\.key).sorted() == theirs.signatures.map(\.key).sorted())
        for reference in theirs.signatures {
            let mine = try #require(ours.signatures.first { $0.key == reference.key })
            #expect(mine.inputs.map(\.name).sorted() == reference.inputs)
            #expect(mine.outputs.map(\.name).sorted() == reference.outputs)
            #expect(Dictionary(uniqueKeysWithValues: mine.inputs.map { ($0.name, $0.tensorIndex) }) == reference.inputTensors)
            #expect(Dictionary(uniqueKeysWithValues: mine.outputs.map { ($0.name, $0.tensorIndex) }) == reference.outputTensors)
        }
    }
}
