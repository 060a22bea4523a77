/// A file that the metadata names and the zip appended to the model holds: labels, a
/// vocabulary, score calibration parameters.
public struct TFLiteAssociatedFile: Sendable, Hashable, Codable {
    /// What the file is for: `AssociatedFileType` of the metadata schema, by name.
    public struct FileType: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let unknown = FileType(rawValue: "UNKNOWN")
        public static let descriptions = FileType(rawValue: "DESCRIPTIONS")
        /// One label per line for each position along a tensor's axis (classifier scores).
        public static let tensorAxisLabels = FileType(rawValue: "TENSOR_AXIS_LABELS")
        /// One label per line for each value a tensor holds (detected class indices).
        public static let tensorValueLabels = FileType(rawValue: "TENSOR_VALUE_LABELS")
        public static let tensorAxisScoreCalibration = FileType(rawValue: "TENSOR_AXIS_SCORE_CALIBRATION")
        public static let vocabulary = FileType(rawValue: "VOCABULARY")
        public static let scannIndexFile = FileType(rawValue: "SCANN_INDEX_FILE")
    }

    /// The file's name in the appended zip.
    public var name: String
    public var description: String?
    public var type: FileType
    /// The language of a label file (`en`, `fr`, …), when there are several.
    public var locale: String?
    public var version: String?

    public init(name: String, description: String? = nil, type: FileType, locale: String? = nil, version: String? = nil) {
        self.name = name
        self.description = description
        self.type = type
        self.locale = locale
        self.version = version
    }
}
