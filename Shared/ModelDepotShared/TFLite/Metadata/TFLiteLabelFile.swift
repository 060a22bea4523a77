/// A label file of an output tensor, read from the zip appended to the model: the names of the
/// classes a classifier scores or a detector reports.
public struct TFLiteLabelFile: Sendable, Hashable, Codable {
    /// The most bytes a label file may have.
    public static let maximumSize = 4 << 20

    /// The file's name in the zip.
    public var name: String
    /// Axis labels (one per score position) or value labels (one per class index the tensor holds).
    public var type: TFLiteAssociatedFile.FileType
    /// The language, when the model has label files in several.
    public var locale: String?
    /// The index of the output tensor in the first subgraph's outputs.
    public var output: Int
    /// One label per line, in order: line `i` names class `i`.
    public var labels: [String]

    /// Creates a label file.
    public init(name: String, type: TFLiteAssociatedFile.FileType, locale: String?, output: Int, labels: [String]) {
        self.name = name
        self.type = type
        self.locale = locale
        self.output = output
        self.labels = labels
    }

    /// Splits a label file's text into labels exactly as the TFLite Task Library and ML Kit do:
    /// at every `\n`, dropping only the empty piece after a final `\n`. A blank line is an empty
    /// label (it keeps the following classes at their indices) and a `\r` before `\n` stays.
    /// - Parameter text: The file's bytes.
    /// - Returns: The labels, in order.
    public static func labels(in text: [UInt8]) -> [String] {
        var lines = text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        return lines.map { String(decoding: $0, as: UTF8.self) }
    }
}

/// A file in the zip appended to a model.
public struct TFLitePackedFile: Sendable, Hashable, Codable {
    /// The file's name in the zip.
    public var name: String
    /// Its size in bytes, uncompressed.
    public var size: Int
    /// Whether it is deflated (else stored).
    public var deflated: Bool

    /// Creates a description.
    public init(name: String, size: Int, deflated: Bool) {
        self.name = name
        self.size = size
        self.deflated = deflated
    }
}
