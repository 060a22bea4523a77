/// What a verified `.tflite` file holds: its subgraphs' inputs and outputs, signatures,
/// operators and metadata — what Python's `tf.lite.Interpreter` would tell you, without Python.
///
/// Only ``TFLiteVerifier`` creates one, after the whole file passed verification.
public struct TFLiteModelDescription: Sendable, Hashable, Codable {
    /// The schema version (always 3 for a verified file).
    public var schemaVersion: Int
    /// `Model.description`, as the converter wrote it.
    public var description: String?
    /// Every subgraph; the first is the one an interpreter runs by default.
    public var subgraphs: [TFLiteSubgraph]
    /// The signature defs (named entry points such as `serving_default`).
    public var signatures: [TFLiteSignature]
    /// The operators the model uses.
    public var operators: TFLiteOperators
    /// The names of the metadata entries (`min_runtime_version`, `TFLITE_METADATA`, …), in file order.
    public var metadata: [String]
    /// Bytes from the start of the file to the end of the flatbuffer.
    public var flatbufferSize: Int
    /// Bytes after the model (flatbuffer and external buffers), such as an appended zip of label files.
    public var appendedDataSize: Int
    /// The TFLite Model Metadata (`TFLITE_METADATA`), when the model has it.
    public var modelMetadata: TFLiteModelMetadata?
    /// The files in the zip appended to the model, when there is one (associated files).
    public var packedFiles: [TFLitePackedFile]?
    /// The label files of the first subgraph's outputs, as the metadata names them; empty without.
    public var labelFiles: [TFLiteLabelFile]

    /// Creates a description; only the verifier and decoding do.
    init(
        schemaVersion: Int, description: String?, subgraphs: [TFLiteSubgraph], signatures: [TFLiteSignature],
        operators: TFLiteOperators, metadata: [String], flatbufferSize: Int, appendedDataSize: Int,
        modelMetadata: TFLiteModelMetadata?, packedFiles: [TFLitePackedFile]?, labelFiles: [TFLiteLabelFile]
    ) {
        self.schemaVersion = schemaVersion
        self.description = description
        self.subgraphs = subgraphs
        self.signatures = signatures
        self.operators = operators
        self.metadata = metadata
        self.flatbufferSize = flatbufferSize
        self.appendedDataSize = appendedDataSize
        self.modelMetadata = modelMetadata
        self.packedFiles = packedFiles
        self.labelFiles = labelFiles
    }

    private enum CodingKeys: String, CodingKey {
        case schemaVersion, description, subgraphs, signatures, operators, metadata, flatbufferSize, appendedDataSize
        case modelMetadata, packedFiles, labelFiles
    }

    /// Decodes a description; one stored before metadata was read has none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        schemaVersion = try container.decode(Int.self, forKey: .schemaVersion)
        description = try container.decodeIfPresent(String.self, forKey: .description)
        subgraphs = try container.decode([TFLiteSubgraph].self, forKey: .subgraphs)
        signatures = try container.decode([TFLiteSignature].self, forKey: .signatures)
        operators = try container.decode(TFLiteOperators.self, forKey: .operators)
        metadata = try container.decode([String].self, forKey: .metadata)
        flatbufferSize = try container.decode(Int.self, forKey: .flatbufferSize)
        appendedDataSize = try container.decode(Int.self, forKey: .appendedDataSize)
        modelMetadata = try container.decodeIfPresent(TFLiteModelMetadata.self, forKey: .modelMetadata)
        packedFiles = try container.decodeIfPresent([TFLitePackedFile].self, forKey: .packedFiles)
        labelFiles = try container.decodeIfPresent([TFLiteLabelFile].self, forKey: .labelFiles) ?? []
    }

    /// The inputs of the first subgraph: what an interpreter feeds by default.
    public var inputs: [TFLiteTensor] { subgraphs.first?.inputs ?? [] }
    /// The outputs of the first subgraph.
    public var outputs: [TFLiteTensor] { subgraphs.first?.outputs ?? [] }
}

/// One subgraph of a model and its input and output tensors.
public struct TFLiteSubgraph: Sendable, Hashable, Codable {
    /// The subgraph's name (`main` for most converted models; may be empty).
    public var name: String
    /// Input tensors in the order the subgraph lists them.
    public var inputs: [TFLiteTensor]
    /// Output tensors in the order the subgraph lists them.
    public var outputs: [TFLiteTensor]
    /// How many tensors the subgraph holds.
    public var tensorCount: Int
    /// How many operators the subgraph runs.
    public var operatorCount: Int
}

/// A tensor of a subgraph, as an interpreter reports it.
public struct TFLiteTensor: Sendable, Hashable, Codable {
    /// The tensor's index in its subgraph.
    public var index: Int
    /// The tensor's name.
    public var name: String
    /// The element type.
    public var type: TFLiteTensorType
    /// The dimensions; `1` where the shape signature has a dynamic dimension.
    public var shape: [Int]
    /// The dimensions with `-1` for each dynamic one; equal to `shape` when nothing is dynamic.
    public var shapeSignature: [Int]
    /// The quantization parameters; empty scales for a float tensor.
    public var quantization: TFLiteQuantization
}

/// Affine quantization: `real = scale * (quantized - zeroPoint)`, per tensor or per channel.
public struct TFLiteQuantization: Sendable, Hashable, Codable {
    /// One scale per tensor, or one per channel along ``quantizedDimension``.
    public var scales: [Float]
    /// One zero point per scale.
    public var zeroPoints: [Int]
    /// The channel dimension when there is more than one scale.
    public var quantizedDimension: Int

    /// No quantization.
    public static let none = TFLiteQuantization(scales: [], zeroPoints: [], quantizedDimension: 0)
}

/// A signature def: a named entry point mapping argument names to tensors of one subgraph.
public struct TFLiteSignature: Sendable, Hashable, Codable {
    /// One argument of a signature: the name an app uses and the tensor it stands for.
    public struct Argument: Sendable, Hashable, Codable {
        /// The argument name (may differ from the tensor's name).
        public var name: String
        /// The tensor's index in the signature's subgraph.
        public var tensorIndex: Int
    }

    /// The signature key, such as `serving_default`.
    public var key: String
    /// The subgraph the signature runs.
    public var subgraphIndex: Int
    /// The input arguments, in file order.
    public var inputs: [Argument]
    /// The output arguments, in file order.
    public var outputs: [Argument]
}

/// The operators a model uses.
public struct TFLiteOperators: Sendable, Hashable, Codable {
    /// Builtin operator names (`CONV_2D`, `FULLY_CONNECTED`, …), sorted, without duplicates.
    public var builtin: [String]
    /// Custom operator names (`TFLite_Detection_PostProcess`, `FlexAddV2`, …), sorted, without duplicates.
    public var custom: [String]
}
