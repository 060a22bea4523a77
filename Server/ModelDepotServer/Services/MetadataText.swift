import ModelDepotShared

/// The human-readable form of a model's TFLite Model Metadata, its label files and the files in
/// its appended zip, as `depot inspect`, `depot versions MODEL N` and the console's version page
/// show them. The lines hold the model's own strings as they are: escape them for the terminal or
/// the page.
public struct MetadataText: Sendable {
    public let model: TFLiteModelDescription

    public init(model: TFLiteModelDescription) { self.model = model }

    public var lines: [String] {
        var lines: [String] = []
        if let metadata = model.modelMetadata {
            var title = "model metadata: \(metadata.name.map { "\"\($0)\"" } ?? "(unnamed)")"
            if let version = metadata.version { title += " \(version)" }
            if let author = metadata.author { title += " by \(author)" }
            if let license = metadata.license { title += " (\(license))" }
            lines.append(title)
            if let description = metadata.description { lines.append("  description: \(description)") }
            for (index, subgraph) in metadata.subgraphs.enumerated() {
                let tensors = index < model.subgraphs.count ? model.subgraphs[index] : nil
                for (position, tensor) in subgraph.inputs.enumerated() {
                    lines.append("  input \(position) \(name(tensor, tensors?.inputs, position)): \(describe(tensor))")
                }
                for (position, tensor) in subgraph.outputs.enumerated() {
                    lines.append("  output \(position) \(name(tensor, tensors?.outputs, position)): \(describe(tensor))")
                }
            }
        } else {
            lines.append("model metadata: none")
        }
        for file in model.labelFiles {
            let shown = file.labels.prefix(5).map(\.debugDescription).joined(separator: ", ")
            lines.append(
                "  labels of output \(file.output) (\(file.name)\(file.locale.map { ", \($0)" } ?? "")): \(file.labels.count) — \(shown)\(file.labels.count > 5 ? ", …" : "")"
            )
        }
        if let packed = model.packedFiles {
            lines.append(
                "associated files: "
                    + (packed.isEmpty
                        ? "none"
                        : packed.map {
                            "\($0.name) (\($0.size) bytes\($0.deflated ? ", deflated" : ""))"
                        }.joined(separator: ", ")))
        }
        return lines
    }

    private func name(_ tensor: TFLiteTensorMetadata, _ tensors: [TFLiteTensor]?, _ position: Int) -> String {
        let described = tensor.name ?? (tensors.flatMap { position < $0.count ? $0[position].name : nil }) ?? ""
        return "\"\(described)\""
    }

    private func describe(_ tensor: TFLiteTensorMetadata) -> String {
        var parts: [String] = []
        switch tensor.content?.properties {
        case .image(let colorSpace, let size)?:
            parts.append("image \(colorSpace)" + (size.map { " \($0.width)x\($0.height)" } ?? ""))
        case .boundingBox(let index, let type, let coordinates)?:
            parts.append("bounding boxes \(type) \(coordinates) \(index)")
        case .audio(let rate, let channels)?:
            parts.append("audio \(rate) Hz, \(channels) channels")
        case .feature?: parts.append("feature")
        case .other(let kind)?: parts.append(kind)
        case nil: break
        }
        if let (mean, std) = tensor.normalization { parts.append("normalization mean \(mean) std \(std)") }
        if let range = tensor.content?.range { parts.append("range \(range.min)...\(range.max)") }
        if let stats = tensor.stats, !(stats.min.isEmpty && stats.max.isEmpty) { parts.append("stats min \(stats.min) max \(stats.max)") }
        if let threshold = tensor.scoreThreshold { parts.append("score threshold \(threshold)") }
        if tensor.hasScoreCalibration { parts.append("score calibration") }
        let files = tensor.associatedFiles.filter { $0.type != .tensorAxisLabels && $0.type != .tensorValueLabels }
        if !files.isEmpty { parts.append("files " + files.map { "\($0.name) (\($0.type))" }.joined(separator: ", ")) }
        return parts.isEmpty ? "no details" : parts.joined(separator: "; ")
    }
}
