import ModelDepotServer
import ModelDepotShared

/// The human-readable form of a ``TFLiteInspection``, as `depot inspect` prints it; the
/// model's own strings escaped (``TerminalText``).
struct InspectionText {
    let inspection: TFLiteInspection
    let file: String

    var rendered: String {
        var lines = ["\(file): \(inspection.size) bytes, sha256 \(inspection.sha256)"]
        guard case .success(let model) = inspection.result else { return TerminalText.lines(lines) }
        lines.append("valid TFLite model, schema version \(model.schemaVersion)")
        if let description = model.description, !description.isEmpty { lines.append("description: \(description)") }
        for (index, subgraph) in model.subgraphs.enumerated() {
            let name = subgraph.name.isEmpty ? "" : " \"\(subgraph.name)\""
            lines.append("subgraph \(index)\(name): \(subgraph.tensorCount) tensors, \(subgraph.operatorCount) operators")
            lines.append("  inputs:")
            lines += subgraph.inputs.map { "    " + describe($0) }
            lines.append("  outputs:")
            lines += subgraph.outputs.map { "    " + describe($0) }
        }
        lines.append("signatures:" + (model.signatures.isEmpty ? " none" : ""))
        for signature in model.signatures {
            lines.append(
                "  \(signature.key) (subgraph \(signature.subgraphIndex)): inputs \(names(signature.inputs)) -> outputs \(names(signature.outputs))"
            )
        }
        lines.append("operators: " + (model.operators.builtin.isEmpty ? "none" : model.operators.builtin.joined(separator: ", ")))
        if !model.operators.custom.isEmpty { lines.append("custom operators: " + model.operators.custom.joined(separator: ", ")) }
        lines.append("metadata: " + (model.metadata.isEmpty ? "none" : model.metadata.joined(separator: ", ")))
        lines += MetadataText(model: model).lines
        lines.append("flatbuffer: \(model.flatbufferSize) bytes; appended data: \(model.appendedDataSize) bytes")
        return TerminalText.lines(lines)
    }

    private func describe(_ tensor: TFLiteTensor) -> String {
        var text = "[\(tensor.index)] \(tensor.name.isEmpty ? "(unnamed)" : tensor.name)  \(tensor.type) \(tensor.shapeSignature)"
        let quantization = tensor.quantization
        if quantization.scales.count == 1 {
            text += "  scale \(quantization.scales[0]) zero point \(quantization.zeroPoints[0])"
        } else if quantization.scales.count > 1 {
            text += "  per-channel (\(quantization.scales.count) scales, dimension \(quantization.quantizedDimension))"
        }
        return text
    }

    private func names(_ arguments: [TFLiteSignature.Argument]) -> String {
        arguments.map(\.name).joined(separator: ", ")
    }
}
