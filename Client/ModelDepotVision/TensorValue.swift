import ModelDepotShared

/// A tensor's bytes with its element type and shape, copied in and out of an interpreter.
public struct TensorValue: Sendable, Hashable {
    /// The element type.
    public var type: TFLiteTensorType
    /// The dimensions.
    public var shape: [Int]
    /// The elements, little-endian, densely packed.
    public var bytes: [UInt8]

    /// Creates a tensor from raw bytes.
    public init(type: TFLiteTensorType, shape: [Int], bytes: [UInt8]) {
        self.type = type
        self.shape = shape
        self.bytes = bytes
    }

    /// A float32 tensor.
    public init(float32 values: [Float], shape: [Int]) {
        self.init(
            type: .float32, shape: shape,
            bytes: [UInt8](unsafeUninitializedCapacity: values.count * 4) { bytes, count in
                let raw = UnsafeMutableRawBufferPointer(bytes)
                for (index, value) in values.enumerated() {
                    raw.storeBytes(of: value.bitPattern.littleEndian, toByteOffset: index * 4, as: UInt32.self)
                }
                count = values.count * 4
            })
    }

    /// A uint8 tensor.
    public init(uint8 values: [UInt8], shape: [Int]) {
        self.init(type: .uint8, shape: shape, bytes: values)
    }

    /// The elements as float32, or `nil` for another type.
    public var float32Values: [Float]? {
        guard type == .float32 else { return nil }
        return bytes.withUnsafeBytes { raw in
            (0..<(raw.count / 4)).map {
                Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self)))
            }
        }
    }

    /// How many bytes a tensor of this type and shape needs, or `nil` for types without a fixed
    /// size: what a runner allocates for a model's tensor (its shape from a verified model, whose
    /// sizes the verifier has checked for overflow).
    public static func byteCount(type: TFLiteTensorType, shape: [Int]) -> Int? {
        type.bitsPerElement.map { (shape.reduce(1, *) * $0 + 7) / 8 }
    }
}
