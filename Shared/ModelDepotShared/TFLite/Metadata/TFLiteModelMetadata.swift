/// TFLite Model Metadata (`metadata_schema.fbs`, identifier `M001`): what a model's
/// `TFLITE_METADATA` buffer says about it and its tensors.
///
/// ``TFLiteVerifier`` reads it, after checking every offset as it does the model's. It encodes to
/// the same JSON as tflite-support's `MetadataDisplayer.get_metadata_json()` (the schema's field
/// names; enum values by name), except that scalars are written even when they hold the
/// schema's default.
///
/// ```swift
/// let model = try TFLiteVerifier().verify(bytes)
/// let image = model.modelMetadata?.subgraphs.first?.inputs.first
/// print(image?.normalization?.mean ?? [])   // [127.5]
/// ```
public struct TFLiteModelMetadata: Sendable, Hashable, Codable {
    public var name: String?
    public var description: String?
    public var version: String?
    public var author: String?
    public var license: String?
    /// The oldest metadata parser that reads all of this metadata.
    public var minParserVersion: String?
    /// One entry per subgraph, in order (usually one).
    public var subgraphs: [TFLiteSubgraphMetadata]
    /// Files that belong to the whole model.
    public var associatedFiles: [TFLiteAssociatedFile]

    private enum CodingKeys: String, CodingKey {
        case name, description, version, author, license
        case minParserVersion = "min_parser_version", subgraphs = "subgraph_metadata", associatedFiles = "associated_files"
    }

    /// Every associated file the metadata names, at any level, in order of appearance.
    public var allAssociatedFiles: [TFLiteAssociatedFile] {
        var files = associatedFiles
        for subgraph in subgraphs {
            files += subgraph.associatedFiles
            for tensor in subgraph.inputs + subgraph.outputs {
                files += tensor.associatedFiles
                for unit in tensor.processUnits { files += unit.associatedFiles }
            }
            for unit in subgraph.inputProcessUnits + subgraph.outputProcessUnits { files += unit.associatedFiles }
        }
        return files
    }
}

/// Metadata of one subgraph: its input and output tensors, in the subgraph's order.
public struct TFLiteSubgraphMetadata: Sendable, Hashable, Codable {
    public var name: String?
    public var description: String?
    /// One entry per input tensor.
    public var inputs: [TFLiteTensorMetadata]
    /// One entry per output tensor.
    public var outputs: [TFLiteTensorMetadata]
    public var associatedFiles: [TFLiteAssociatedFile]
    /// Processing shared by several inputs (a tokenizer).
    public var inputProcessUnits: [TFLiteProcessUnit]
    /// Processing shared by several outputs.
    public var outputProcessUnits: [TFLiteProcessUnit]
    public var inputTensorGroups: [TFLiteTensorGroup]
    public var outputTensorGroups: [TFLiteTensorGroup]
    public var customMetadata: [TFLiteCustomMetadata]

    private enum CodingKeys: String, CodingKey {
        case name, description
        case inputs = "input_tensor_metadata", outputs = "output_tensor_metadata", associatedFiles = "associated_files"
        case inputProcessUnits = "input_process_units", outputProcessUnits = "output_process_units"
        case inputTensorGroups = "input_tensor_groups", outputTensorGroups = "output_tensor_groups", customMetadata = "custom_metadata"
    }
}

/// Metadata of one tensor: what it holds, how to prepare it, and its files (labels).
public struct TFLiteTensorMetadata: Sendable, Hashable, Codable {
    public var name: String?
    public var description: String?
    /// A name per dimension, such as `["batch", "height", "width", "channels"]`.
    public var dimensionNames: [String]
    public var content: TFLiteContent?
    /// Normalization for an input; score calibration and thresholds for an output.
    public var processUnits: [TFLiteProcessUnit]
    /// The tensor's value range, as `max` and `min` per channel.
    public var stats: TFLiteStats?
    /// Label files (``TFLiteAssociatedFile/FileType/tensorAxisLabels``) and others.
    public var associatedFiles: [TFLiteAssociatedFile]

    private enum CodingKeys: String, CodingKey {
        case name, description, content, stats
        case dimensionNames = "dimension_names", processUnits = "process_units", associatedFiles = "associated_files"
    }

    /// The normalization (`(value - mean) / std`) of an input, if the metadata gives one.
    public var normalization: (mean: [Float], std: [Float])? {
        for unit in processUnits { if case .normalization(let mean, let std) = unit.options { return (mean, std) } }
        return nil
    }

    /// The score threshold of an output, if the metadata gives one.
    public var scoreThreshold: Float? {
        for unit in processUnits { if case .scoreThresholding(let threshold) = unit.options { return threshold } }
        return nil
    }

    /// Whether the metadata asks for score calibration of this output.
    public var hasScoreCalibration: Bool {
        processUnits.contains { if case .scoreCalibration = $0.options { true } else { false } }
    }

    /// The label files of this tensor (axis labels first), each with its locale.
    public var labelFiles: [TFLiteAssociatedFile] {
        associatedFiles.filter { $0.type == .tensorAxisLabels } + associatedFiles.filter { $0.type == .tensorValueLabels }
    }
}

/// What a tensor holds, and its value range.
public struct TFLiteContent: Sendable, Hashable, Codable {
    /// The kind of content.
    public enum Properties: Sendable, Hashable {
        case feature
        /// An image: its color space and, optionally, the size it was trained on.
        case image(colorSpace: String, defaultSize: TFLiteImageSize?)
        /// Bounding boxes: which of the last dimension's values are which coordinate.
        case boundingBox(index: [UInt32], type: String, coordinateType: String)
        case audio(sampleRate: UInt32, channels: UInt32)
        /// A kind this reader does not know (from a newer schema), by its union type.
        case other(String)
    }

    public var properties: Properties?
    /// The range of values, for a quantized or integer tensor.
    public var range: TFLiteValueRange?

    public init(properties: Properties?, range: TFLiteValueRange?) {
        self.properties = properties
        self.range = range
    }

    private enum CodingKeys: String, CodingKey {
        case type = "content_properties_type", properties = "content_properties", range
    }

    private enum PropertyKeys: String, CodingKey {
        case colorSpace = "color_space", defaultSize = "default_size", index, type
        case coordinateType = "coordinate_type", sampleRate = "sample_rate", channels
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        range = try container.decodeIfPresent(TFLiteValueRange.self, forKey: .range)
        guard let type = try container.decodeIfPresent(String.self, forKey: .type) else {
            properties = nil
            return
        }
        let values = try? container.nestedContainer(keyedBy: PropertyKeys.self, forKey: .properties)
        switch type {
        case "FeatureProperties": properties = .feature
        case "ImageProperties":
            properties = .image(
                colorSpace: try values?.decodeIfPresent(String.self, forKey: .colorSpace) ?? "UNKNOWN",
                defaultSize: try values?.decodeIfPresent(TFLiteImageSize.self, forKey: .defaultSize))
        case "BoundingBoxProperties":
            properties = .boundingBox(
                index: try values?.decodeIfPresent([UInt32].self, forKey: .index) ?? [],
                type: try values?.decodeIfPresent(String.self, forKey: .type) ?? "UNKNOWN",
                coordinateType: try values?.decodeIfPresent(String.self, forKey: .coordinateType) ?? "RATIO")
        case "AudioProperties":
            properties = .audio(
                sampleRate: try values?.decodeIfPresent(UInt32.self, forKey: .sampleRate) ?? 0,
                channels: try values?.decodeIfPresent(UInt32.self, forKey: .channels) ?? 0)
        default: properties = .other(type)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(range, forKey: .range)
        switch properties {
        case nil: return
        case .feature:
            try container.encode("FeatureProperties", forKey: .type)
            _ = container.nestedContainer(keyedBy: PropertyKeys.self, forKey: .properties)
        case .image(let colorSpace, let defaultSize):
            try container.encode("ImageProperties", forKey: .type)
            var values = container.nestedContainer(keyedBy: PropertyKeys.self, forKey: .properties)
            try values.encode(colorSpace, forKey: .colorSpace)
            try values.encodeIfPresent(defaultSize, forKey: .defaultSize)
        case .boundingBox(let index, let type, let coordinateType):
            try container.encode("BoundingBoxProperties", forKey: .type)
            var values = container.nestedContainer(keyedBy: PropertyKeys.self, forKey: .properties)
            try values.encode(index, forKey: .index)
            try values.encode(type, forKey: .type)
            try values.encode(coordinateType, forKey: .coordinateType)
        case .audio(let sampleRate, let channels):
            try container.encode("AudioProperties", forKey: .type)
            var values = container.nestedContainer(keyedBy: PropertyKeys.self, forKey: .properties)
            try values.encode(sampleRate, forKey: .sampleRate)
            try values.encode(channels, forKey: .channels)
        case .other(let type):
            try container.encode(type, forKey: .type)
        }
    }
}

/// An image size in pixels.
public struct TFLiteImageSize: Sendable, Hashable, Codable {
    public var width: UInt32
    public var height: UInt32

    public init(width: UInt32, height: UInt32) {
        self.width = width
        self.height = height
    }
}

/// The range of a tensor's values.
public struct TFLiteValueRange: Sendable, Hashable, Codable {
    public var min: Int32
    public var max: Int32

    public init(min: Int32, max: Int32) {
        self.min = min
        self.max = max
    }
}

/// The largest and smallest values of a tensor, per channel.
public struct TFLiteStats: Sendable, Hashable, Codable {
    public var max: [Float]
    public var min: [Float]

    public init(max: [Float], min: [Float]) {
        self.max = max
        self.min = min
    }
}

/// A named group of tensors.
public struct TFLiteTensorGroup: Sendable, Hashable, Codable {
    public var name: String?
    public var tensorNames: [String]

    private enum CodingKeys: String, CodingKey {
        case name, tensorNames = "tensor_names"
    }
}

/// Custom metadata: a name and bytes only its writer understands.
public struct TFLiteCustomMetadata: Sendable, Hashable, Codable {
    /// Data up to this size is kept; larger data is described by its size only.
    public static let keptDataSize = 4096

    public var name: String?
    /// The data's size in bytes.
    public var size: Int
    /// The data, when it is at most ``keptDataSize`` bytes.
    public var data: [UInt8]?
}
