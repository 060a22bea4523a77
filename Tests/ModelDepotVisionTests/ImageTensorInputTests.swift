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

    /// A model's numbers that would make a quantized pixel no number or overflow an Int (each
    /// trapped the app before) are refused; a tiny scale saturates, as clamping does.
    @Test func parametersThatCannotQuantizeAreRefused() throws {
        for (scale, zeroPoint) in [(Float(0), 0), (-1, 0), (1, 128), (1, -129), (1, Int.max), (1, Int.min)] {
            let refused = #expect(throws: DepotError.self, "scale \(scale), zero point \(zeroPoint)") {
                try ImageTensorInput(tensor: Self.tensor(.int8, scale: scale, zeroPoint: zeroPoint), metadata: nil)
            }
            #expect(refused?.code == .unsupportedModel)
        }
        for (mean, std) in [([Float(0)], [Float(0)]), ([0, 0, 0], [1, 0, 1])] {
            for type in [TFLiteTensorType.int8, .float32] {
                let refused = #expect(throws: DepotError.self, "\(type) mean \(mean), std \(std)") {
                    try ImageTensorInput(tensor: Self.tensor(type, scale: 0.5), metadata: Self.metadata(mean: mean, std: std))
                }
                #expect(refused?.code == .unsupportedModel)
            }
        }
        let tiny = try ImageTensorInput(tensor: Self.tensor(.int8, scale: 1e-45), metadata: Self.metadata(mean: [127.5], std: [127.5]))
        #expect(tiny.value(for: pixels).bytes.map { Int8(bitPattern: $0) } == [-128, -128, 127, -128, -128, -128])
    }

    /// A uint8 classifier's scores are dequantized in Float: any zero point gives numbers, none traps.
    @Test func scoresDequantizeWithAnyZeroPoint() throws {
        let value = TensorValue(uint8: [0, 1, 255], shape: [1, 3])
        for (zeroPoint, expected) in [
            (0, [Float(0), 0.5, 127.5]), (Int.min, [4.611686e18, 4.611686e18, 4.611686e18]),
            (Int.max, [-4.611686e18, -4.611686e18, -4.611686e18]),
        ] {
            let quantization = try JSONDecoder().decode(
                TFLiteQuantization.self, from: Data(#"{"scales": [0.5], "zeroPoints": [\#(zeroPoint)], "quantizedDimension": 0}"#.utf8))
            #expect(ImageClassifier.scores(value, quantization: quantization) == expected, "zero point \(zeroPoint)")
        }
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
