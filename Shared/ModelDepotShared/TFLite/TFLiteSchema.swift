/// The TFLite FlatBuffers schema (`schema.fbs`, version 3) as the verifier needs it.
///
/// `TFLiteSchema+Tables.swift` is generated from the schema that the `ai-edge-litert` wheel
/// ships, by `scripts/tflite/generate_schema.py`.
enum TFLiteSchema {
    /// The only schema version this verifier reads.
    static let version: UInt32 = 3
    /// The file identifier at bytes 4..<8.
    static let fileIdentifier: [UInt8] = Array("TFL3".utf8)
    /// `BuiltinOperator.CUSTOM`.
    static let customOperatorCode = 32
}
