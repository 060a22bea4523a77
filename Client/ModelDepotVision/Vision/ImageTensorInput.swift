import ModelDepotShared

/// How an image becomes a model's input tensor, as the TFLite Task Library prepares it: the image
/// (or a region of it) resized to the input's height and width with libyuv's bilinear filter,
/// then written as the tensor's type.
///
/// - `uint8`: the pixel bytes as they are.
/// - `int8`: normalized and quantized with the tensor's scale and zero point when the metadata
///   gives a normalization; else each byte shifted by the zero point (`pixel + zeroPoint`).
/// - `float32`: `(pixel - mean) * (1 / std)` in float32, per channel when the metadata gives one
///   value per channel; the raw pixel values when it gives none.
struct ImageTensorInput {
    let tensor: TFLiteTensor
    let normalization: (mean: [Float], std: [Float])?
    let width: Int
    let height: Int

    /// - Throws: `DepotError` (`unsupported_model`) when the input is not an image tensor this reads.
    init(tensor: TFLiteTensor, metadata: TFLiteTensorMetadata?) throws(DepotError) {
        let shape = tensor.shape
        guard shape.count == 4, shape[0] == 1, shape[3] == 3, shape[1] > 0, shape[2] > 0 else {
            throw DepotError(
                .unsupportedModel, "The model's input '\(tensor.name)' has shape \(shape); an image input is [1, height, width, 3] (RGB).")
        }
        guard [.uint8, .int8, .float32].contains(tensor.type) else {
            throw DepotError(
                .unsupportedModel, "The model's input '\(tensor.name)' is \(tensor.type); image inputs are uint8, int8 or float32.")
        }
        if tensor.type == .int8 {
            let scale = tensor.quantization.scales.first ?? 1
            let zeroPoint = tensor.quantization.zeroPoints.first ?? 0
            guard scale.isFinite, scale > 0, (-128...127).contains(zeroPoint) else {
                throw DepotError(
                    .unsupportedModel,
                    "The model's input '\(tensor.name)' is int8 with scale \(scale) and zero point \(zeroPoint); an int8 image input needs a finite scale above 0 and a zero point from -128 to 127."
                )
            }
        }
        if let (mean, std) = metadata?.normalization, !(mean + std).allSatisfy(\.isFinite) || std.contains(0) {
            throw DepotError(
                .unsupportedModel,
                "The model's input '\(tensor.name)' is normalized with mean \(mean.prefix(3)) and std \(std.prefix(3)); each must be a finite number, and std not 0."
            )
        }
        self.tensor = tensor
        normalization = metadata?.normalization
        height = shape[1]
        width = shape[2]
    }

    /// The first input of a model, with the metadata of that input.
    /// - Throws: `DepotError` (`unsupported_model`) when the model has no image input.
    init(firstInputOf model: TFLiteModelDescription) throws(DepotError) {
        guard let image = model.inputs.first else { throw DepotError(.unsupportedModel, "The model has no input.") }
        try self.init(tensor: image, metadata: model.modelMetadata?.subgraphs.first?.inputs.first)
    }

    /// The tensor for an RGB image of exactly the input's size.
    func value(for image: PixelBuffer) -> TensorValue {
        let pixels = image.bytes
        switch tensor.type {
        case .uint8:
            return TensorValue(uint8: pixels, shape: tensor.shape)
        case .int8:
            let scale = tensor.quantization.scales.first ?? 1
            let zeroPoint = tensor.quantization.zeroPoints.first ?? 0
            let bytes = pixels.enumerated().map { index, pixel -> UInt8 in
                let quantized: Int
                if let (mean, std) = normalization {
                    let channel = index % 3
                    let real = (Float(pixel) - Self.pick(mean, channel)) * (1 / Self.pick(std, channel))
                    // Clamped as a Float first: a tiny scale makes it too large for an Int.
                    quantized = Int(max(-256, min(256, (real / scale).rounded()))) + zeroPoint
                } else {
                    quantized = Int(pixel) + zeroPoint
                }
                return UInt8(bitPattern: Int8(clamping: quantized))
            }
            return TensorValue(type: .int8, shape: tensor.shape, bytes: bytes)
        default:
            guard let (mean, std) = normalization else { return TensorValue(float32: pixels.map(Float.init), shape: tensor.shape) }
            let inverse = (1 / Self.pick(std, 0), 1 / Self.pick(std, 1), 1 / Self.pick(std, 2))
            let means = (Self.pick(mean, 0), Self.pick(mean, 1), Self.pick(mean, 2))
            var values = [Float](repeating: 0, count: pixels.count)
            values.withUnsafeMutableBufferPointer { out in
                pixels.withUnsafeBufferPointer { source in
                    for pixel in stride(from: 0, to: source.count - 2, by: 3) {
                        out[pixel] = inverse.0 * (Float(source[pixel]) - means.0)
                        out[pixel + 1] = inverse.1 * (Float(source[pixel + 1]) - means.1)
                        out[pixel + 2] = inverse.2 * (Float(source[pixel + 2]) - means.2)
                    }
                }
            }
            return TensorValue(float32: values, shape: tensor.shape)
        }
    }

    private static func pick(_ values: [Float], _ channel: Int) -> Float {
        values.count == 3 ? values[channel] : values[0]
    }
}
