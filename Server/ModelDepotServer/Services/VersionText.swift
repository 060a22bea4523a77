import Foundation
import ModelDepotShared

/// One version in full, as `depot versions MODEL N` prints it and the console's version page
/// shows it: size and digest, inputs and outputs, companion files and metadata. The lines hold
/// the model's own strings and the notes as they are: escape them for the terminal or the page.
public struct VersionText: Sendable {
    public let version: ModelVersion

    public init(version: ModelVersion) { self.version = version }

    public var lines: [String] {
        var lines = [
            "'\(version.model)' version \(version.version): \(version.size) bytes, sha256 \(version.sha256)",
            "published: \(version.published ? "yes" : "no"); uploaded \(version.createdAt.formatted(.iso8601))\(version.uploadedBy.map { " by key \($0)" } ?? "")",
        ]
        if !version.notes.isEmpty { lines.append("notes: \(version.notes)") }
        lines.append("inputs:")
        lines += version.tflite.inputs.map { "  \($0.name.isEmpty ? "(unnamed)" : $0.name)  \($0.type) \($0.shapeSignature)" }
        lines.append("outputs:")
        lines += version.tflite.outputs.map { "  \($0.name.isEmpty ? "(unnamed)" : $0.name)  \($0.type) \($0.shapeSignature)" }
        lines.append("companion files:" + (version.files.isEmpty ? " none" : ""))
        lines += version.files.map { "  \($0.name)  \($0.size) bytes, sha256 \($0.sha256)" }
        return lines + MetadataText(model: version.tflite).lines
    }
}
