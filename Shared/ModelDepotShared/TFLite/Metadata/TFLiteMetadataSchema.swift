/// The TFLite Model Metadata FlatBuffers schema (`metadata_schema.fbs`) as the reader needs it.
///
/// `TFLiteMetadataSchema+Tables.swift` is generated from the schema that the `tflite-support`
/// wheel ships, by `scripts/tflite/generate_schema.py`.
enum TFLiteMetadataSchema {
    /// The name of the model's metadata entry whose buffer holds the metadata.
    static let metadataName = "TFLITE_METADATA"
    /// The file identifier at bytes 4..<8 of the metadata buffer.
    static let fileIdentifier: [UInt8] = Array("M001".utf8)

    /// An enum value's name, or its number when this schema does not know it (as flatc prints it).
    static func name(_ value: some FixedWidthInteger, in names: [String]) -> String {
        value >= 0 && Int(value) < names.count && !names[Int(value)].isEmpty ? names[Int(value)] : String(value)
    }
}
