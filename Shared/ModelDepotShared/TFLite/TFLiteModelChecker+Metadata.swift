/// Reading the model's metadata (`TFLITE_METADATA`) and the zip of associated files after it,
/// and checking that they fit the model and each other.
extension TFLiteModelChecker {
    struct MetadataReport {
        var metadata: TFLiteModelMetadata?
        var packedFiles: [TFLitePackedFile]?
        var labelFiles: [TFLiteLabelFile]
    }

    func checkModelMetadata(bufferIndex: Int?, subgraphs: [TFLiteSubgraph], appendedStart: Int) throws(DepotError) -> MetadataReport {
        var metadata: TFLiteModelMetadata?
        if let bufferIndex {
            let read = try TFLiteMetadataReader(bytes: model.bytes.slice(bufferRange(bufferIndex)), policy: policy).read()
            try check(read, against: subgraphs)
            metadata = read
        }
        let archive = try ZipArchive.find(in: model.bytes, after: appendedStart)
        var contents: [String: [UInt8]] = [:]
        var budget = ZipArchive.Budget(limit: policy.maximumAssociatedFilesSize)
        let labelNames = Set(metadata?.subgraphs.first?.outputs.flatMap(\.labelFiles).map(\.name) ?? [])
        for entry in archive?.entries ?? [] {
            if labelNames.contains(entry.name) {
                guard entry.size <= TFLiteLabelFile.maximumSize else {
                    throw DepotError(
                        .invalidAssociatedFiles,
                        "The label file '\(entry.name)' has \(entry.size) bytes; label files may have at most \(TFLiteLabelFile.maximumSize)."
                    )
                }
                contents[entry.name] = try archive!.contents(of: entry, within: &budget)
            } else {
                try archive!.read(entry, within: &budget) { _ in }
            }
        }
        let packed = Set(archive?.entries.map(\.name) ?? [])
        for file in metadata?.allAssociatedFiles ?? [] where !packed.contains(file.name) {
            throw DepotError(
                .associatedFileMissing,
                "The metadata names the associated file '\(file.name)' (\(file.type)), but \(archive == nil ? "no zip of associated files follows the model" : "the zip after the model does not hold it (it holds \(packed.sorted()))"). Pack it with tflite-support's MetadataPopulator.load_associated_files and upload again."
            )
        }
        var labelFiles: [TFLiteLabelFile] = []
        for (output, tensor) in (metadata?.subgraphs.first?.outputs ?? []).enumerated() {
            for file in tensor.labelFiles {
                labelFiles.append(
                    TFLiteLabelFile(
                        name: file.name, type: file.type, locale: file.locale, output: output,
                        labels: TFLiteLabelFile.labels(in: contents[file.name] ?? [])))
            }
        }
        return MetadataReport(
            metadata: metadata,
            packedFiles: archive.map { $0.entries.map { TFLitePackedFile(name: $0.name, size: $0.size, deflated: $0.method == 8) } },
            labelFiles: labelFiles)
    }

    private func check(_ metadata: TFLiteModelMetadata, against subgraphs: [TFLiteSubgraph]) throws(DepotError) {
        guard metadata.subgraphs.count <= subgraphs.count else {
            throw DepotError(
                .invalidModelMetadata,
                "The metadata describes \(metadata.subgraphs.count) subgraphs, but the model has \(subgraphs.count). Re-populate the metadata for this model."
            )
        }
        for (index, described) in metadata.subgraphs.enumerated() {
            for (kind, tensors) in [("input", described.inputs), ("output", described.outputs)] {
                for (position, tensor) in tensors.enumerated() {
                    let values = (tensor.stats.map { $0.max + $0.min } ?? []) + tensor.processUnits.flatMap(\.numbers)
                    guard values.allSatisfy(\.isFinite) else {
                        throw DepotError(
                            .invalidModelMetadata,
                            "The metadata of \(kind) \(position) of subgraph \(index) holds a number that is not finite (NaN or infinity) in its stats or process units; the metadata is damaged."
                        )
                    }
                }
            }
        }
        for (index, (described, subgraph)) in zip(metadata.subgraphs, subgraphs).enumerated() {
            for (what, count, actual) in [
                ("inputs", described.inputs.count, subgraph.inputs.count), ("outputs", described.outputs.count, subgraph.outputs.count),
            ]
            where count != 0 && count != actual {
                throw DepotError(
                    .invalidModelMetadata,
                    "The metadata of subgraph \(index) describes \(count) \(what), but the subgraph has \(actual). Re-populate the metadata for this model."
                )
            }
            for (position, tensor) in described.inputs.enumerated() {
                guard let (mean, std) = tensor.normalization else { continue }
                guard !mean.isEmpty, mean.count == std.count, std.allSatisfy({ $0 != 0 && $0.isFinite }), mean.allSatisfy(\.isFinite) else {
                    throw DepotError(
                        .invalidModelMetadata,
                        "The normalization of input \(position) of subgraph \(index) has mean \(mean) and std \(std); it needs as many of each, at least one, finite, and no std of 0."
                    )
                }
            }
        }
    }
}
