extension DepotError.Code {
    /// The file could not be opened, mapped or read.
    public static let fileUnreadable = Self("file_unreadable")
    /// The file is shorter than the smallest possible TFLite model (12 bytes).
    public static let modelTooSmall = Self("model_too_small")
    /// The file is 2 GiB or larger.
    public static let modelTooLarge = Self("model_too_large")
    /// Bytes 4..<8 are not the TFLite file identifier `TFL3`.
    public static let wrongFileIdentifier = Self("wrong_file_identifier")
    /// `Model.version` is not the schema version 3.
    public static let unsupportedSchemaVersion = Self("unsupported_schema_version")
    /// An offset, vector, string or field lies outside the file.
    public static let offsetOutOfBounds = Self("offset_out_of_bounds")
    /// An offset, vector or field is not aligned as FlatBuffers requires.
    public static let misaligned = Self("misaligned")
    /// A table's vtable is malformed.
    public static let invalidVTable = Self("invalid_vtable")
    /// A string has no terminating zero byte.
    public static let unterminatedString = Self("unterminated_string")
    /// Tables nest deeper than the verifier allows.
    public static let nestingTooDeep = Self("nesting_too_deep")
    /// The file holds more tables than the verifier allows.
    public static let tooManyTables = Self("too_many_tables")
    /// The model has no subgraph.
    public static let noSubgraphs = Self("no_subgraphs")
    /// An index (tensor, buffer, operator code, subgraph, …) points past the end of its list.
    public static let indexOutOfRange = Self("index_out_of_range")
    /// `-1` (no tensor) appears where only an optional operator input may use it.
    public static let optionalTensorNotAllowed = Self("optional_tensor_not_allowed")
    /// One tensor is both an input and an output of the same operator.
    public static let tensorIsInputAndOutput = Self("tensor_is_input_and_output")
    /// A dimension is negative, or a shape signature disagrees with its shape.
    public static let invalidShape = Self("invalid_shape")
    /// A tensor's byte size does not fit in an integer.
    public static let tensorSizeOverflow = Self("tensor_size_overflow")
    /// A tensor's type is not a known `TensorType`.
    public static let unknownTensorType = Self("unknown_tensor_type")
    /// A constant tensor's data does not have the size its shape and type require.
    public static let constantDataMismatch = Self("constant_data_mismatch")
    /// Quantization parameters disagree with each other or with the tensor's shape.
    public static let invalidQuantization = Self("invalid_quantization")
    /// An external buffer (`Buffer.offset`/`size`) lies outside the file.
    public static let externalBufferOutOfBounds = Self("external_buffer_out_of_bounds")
    /// An operator code is negative, or a custom operator has no name.
    public static let invalidOperatorCode = Self("invalid_operator_code")
    /// The verification policy does not allow custom operators.
    public static let customOperatorNotAllowed = Self("custom_operator_not_allowed")
    /// The verification policy does not allow Flex (TensorFlow select) operators.
    public static let flexOperatorNotAllowed = Self("flex_operator_not_allowed")
    /// The verification policy does not allow sparse tensors.
    public static let sparseTensorNotAllowed = Self("sparse_tensor_not_allowed")
    /// The model's inputs or outputs differ from what the app expects.
    public static let signatureMismatch = Self("signature_mismatch")
}

extension DepotError.Code {
    /// The `TFLITE_METADATA` buffer is not valid TFLite Model Metadata (`M001`), or does not fit the model.
    public static let invalidModelMetadata = Self("invalid_model_metadata")
    /// The zip of associated files appended to the model is damaged or inconsistent.
    public static let invalidAssociatedFiles = Self("invalid_associated_files")
    /// The associated files inflate to more than ``TFLiteVerificationPolicy/maximumAssociatedFilesSize``.
    public static let associatedFilesTooLarge = Self("associated_files_too_large")
    /// The metadata names an associated file that the appended zip does not hold.
    public static let associatedFileMissing = Self("associated_file_missing")
}
