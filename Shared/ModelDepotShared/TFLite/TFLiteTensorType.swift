/// The element type of a tensor, as the TFLite schema's `TensorType` numbers it and as LiteRT
/// spells it (`float32`, `int8`, `uint8`, `string`, `resource`, …).
///
/// ```swift
/// let type = TFLiteTensorType(name: "float32")   // .float32
/// type.bitsPerElement                           // 32
/// ```
public struct TFLiteTensorType: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The schema's `TensorType` value.
    public let rawValue: Int

    /// Creates a type from the schema's `TensorType` value, or `nil` for a value it does not define.
    /// - Parameter rawValue: The `TensorType` value.
    public init?(rawValue: Int) {
        guard rawValue >= 0, rawValue < TFLiteSchema.tensorTypeNames.count,
            !TFLiteSchema.tensorTypeNames[rawValue].isEmpty
        else { return nil }
        self.rawValue = rawValue
    }

    /// Creates a type from its LiteRT spelling, or `nil` for a name it does not define.
    /// - Parameter name: A dtype name such as `float32`.
    public init?(name: String) {
        guard let index = TFLiteSchema.tensorTypeNames.firstIndex(where: { $0.lowercased() == name }) else { return nil }
        rawValue = index
    }

    /// The LiteRT spelling: `float32`, `float16`, `int8`, `uint8`, `int32`, `string`, …
    public var name: String { TFLiteSchema.tensorTypeNames[rawValue].lowercased() }

    /// Bits one element takes in a dense buffer; `nil` for types without a fixed size
    /// (`string`, `resource`, `variant`).
    public var bitsPerElement: Int? {
        switch name {
        case "string", "resource", "variant": nil
        case "int2": 2
        case "int4", "uint4": 4
        case "uint8", "int8", "bool", "float8_e4m3fn", "float8_e5m2": 8
        case "float16", "int16", "uint16", "bfloat16": 16
        case "float32", "int32", "uint32": 32
        case "float64", "int64", "uint64", "complex64": 64
        default: 128
        }
    }

    public var description: String { name }

    public static let float32 = TFLiteTensorType(rawValue: 0)!
    public static let float16 = TFLiteTensorType(rawValue: 1)!
    public static let int32 = TFLiteTensorType(rawValue: 2)!
    public static let uint8 = TFLiteTensorType(rawValue: 3)!
    public static let int64 = TFLiteTensorType(rawValue: 4)!
    public static let string = TFLiteTensorType(rawValue: 5)!
    public static let bool = TFLiteTensorType(rawValue: 6)!
    public static let int16 = TFLiteTensorType(rawValue: 7)!
    public static let int8 = TFLiteTensorType(rawValue: 9)!

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard let type = TFLiteTensorType(name: name) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "'\(name)' is not a TFLite tensor type; use a LiteRT dtype name such as float32 or uint8.")
        }
        self = type
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}
