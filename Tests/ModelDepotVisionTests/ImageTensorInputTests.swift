import Foundation
import ModelDepotShared
import Testing

@testable import ModelDepotVision

/// An image becomes the model's input as the Task Library makes it: float32 normalized with the
/// reciprocal of std, uint8 as it is, int8 quantized with the tensor's parameters.
@Suite struct ImageTensorInputTests {
    static func tensor(_ type: TFLiteTensorType, scale: Float? = nil, zeroPoint: Int = 0) -> TFLiteTensor {
        let decoded = """
            {"index": 0, "name": "image", "type": "\(type.name)", "shape": [1, 1, 2, 3], "shapeSignature": [1, 1, 2, 3],
             "quantization": {"scales": \(scale.map { "[\($0)]" } ?? "[]"), "zeroPoints": \(scale == nil ? "[]" : "[\(zeroPoint)]"), "quantizedDimension": 0}}
            """
        return try! JSONDecoder().decode(TFLiteTensor.self, from: Data(decoded.utf8))
    }

    static func metadata(mean: [Float], std: [Float]) -> TFLiteTensorMetadata {
        let decoded = """
            {"dimension_names": [], "process_units": [{"options_type": "NormalizationOptions", "options": {"mean": \(mean), "std": \(std)}}],
             "associated_files": []}
            """
        return try! JSONDecoder().decode(TFLiteTensorMetadata.self, from: Data(decoded.utf8))
    }

    let pixels = try! PixelBuffer(width: 2, height: 1, format: .rgb8, bytes: [0, 127, 255, 10, 20, 30])

    @Test func float32IsNormalizedPerChannelWithTheReciprocalOfStd() throws {
        let input = try ImageTensorInput(tensor: Self.tensor(.float32), metadata: Self.metadata(mean: [127.5], std: [127.5]))
        let values = try #require(input.value(for: pixels).float32Values)
        #expect(values == pixels.bytes.map { (1 / Float(127.5)) * (Float($0) - 127.5) })
        let perChannel = try ImageTensorInput(tensor: Self.tensor(.float32), metadata: Self.metadata(mean: [0, 10, 20], std: [1, 2, 4]))
        #expect(perChannel.value(for: pixels).float32Values == [0, 58.5, 58.75, 10, 5, 2.5])
        let raw = try ImageTensorInput(tensor: Self.tensor(.float32), metadata: nil)
        #expect(raw.value(for: pixels).float32Values == pixels.bytes.map(Float.init))
    }

    @Test func uint8IsCopiedAndInt8Quantized() throws {
        let uint8 = try ImageTensorInput(tensor: Self.tensor(.uint8, scale: 0.5, zeroPoint: 3), metadata: nil)
        #expect(uint8.value(for: pixels).bytes == pixels.bytes)
        let shifted = try ImageTensorInput(tensor: Self.tensor(.int8, scale: 1, zeroPoint: -128), metadata: nil)
        #expect(shifted.value(for: pixels).bytes.map { Int8(bitPattern: $0) } == [-128, -1, 127, -118, -108, -98])
        let quantized = try ImageTensorInput(
            tensor: Self.tensor(.int8, scale: 1.0 / 128, zeroPoint: 0), metadata: Self.metadata(mean: [127.5], std: [127.5]))
        #expect(quantized.value(for: pixels).bytes.map { Int8(bitPattern: $0) } == [-128, -1, 127, -118, -108, -98])
    }

    @Test func otherInputsAreRefused() {
        var wrong = Self.tensor(.float32)
        wrong.shape = [1, 4]
        let notAnImage = #expect(throws: DepotError.self) { try ImageTensorInput(tensor: wrong, metadata: nil) }
        #expect(notAnImage?.code == .unsupportedModel)
        let notPixels = #expect(throws: DepotError.self) { try ImageTensorInput(tensor: Self.tensor(.int32), metadata: nil) }
        #expect(notPixels?.code == .unsupportedModel)
    }
}
