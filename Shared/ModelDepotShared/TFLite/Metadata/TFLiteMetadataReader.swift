/// Reads a `TFLITE_METADATA` buffer: checks its identifier and every offset with
/// ``FlatBufferVerifier`` against the metadata schema, then builds ``TFLiteModelMetadata``.
struct TFLiteMetadataReader {
    typealias Schema = TFLiteMetadataSchema

    let bytes: FlatBufferBytes
    let policy: TFLiteVerificationPolicy

    func read() throws(DepotError) -> TFLiteModelMetadata {
        guard bytes.count >= 8 else {
            throw DepotError(
                .invalidModelMetadata,
                "The TFLITE_METADATA buffer has \(bytes.count) bytes, too few for TFLite Model Metadata; the metadata is damaged. Re-populate it with tflite-support's MetadataPopulator."
            )
        }
        let identifier = (4..<8).map { bytes.load(UInt8.self, at: $0) }
        guard identifier == Schema.fileIdentifier else {
            let shown = identifier.map { (32..<127).contains($0) ? String(UnicodeScalar($0)) : "\\x" + String($0, radix: 16) }.joined()
            throw DepotError(
                .invalidModelMetadata,
                "The TFLITE_METADATA buffer's identifier (bytes 4..<8) is \"\(shown)\", not \"M001\": it is not TFLite Model Metadata. Re-populate it with tflite-support's MetadataPopulator."
            )
        }
        var structure = FlatBufferVerifier(
            bytes: bytes, tables: Schema.tables, unions: Schema.unions,
            maximumDepth: policy.maximumDepth, maximumTables: policy.maximumTables,
            rootName: "ModelMetadata")
        do {
            try structure.verifyRoot(Schema.TableID.modelMetadata)
        } catch {
            throw DepotError(.invalidModelMetadata, "The TFLITE_METADATA buffer is damaged: \(error.message)")
        }
        let root = FlatBufferTable(bytes: bytes, position: bytes.target(ofOffsetAt: 0))
        typealias Fields = Schema.ModelMetadata
        return TFLiteModelMetadata(
            name: root.string(Fields.name), description: root.string(Fields.description), version: root.string(Fields.version),
            author: root.string(Fields.author), license: root.string(Fields.license),
            minParserVersion: root.string(Fields.minParserVersion),
            subgraphs: root.tables(Fields.subgraphMetadata).map(subgraph),
            associatedFiles: root.tables(Fields.associatedFiles).map(associatedFile))
    }

    private func subgraph(_ table: FlatBufferTable) -> TFLiteSubgraphMetadata {
        typealias Fields = Schema.SubGraphMetadata
        return TFLiteSubgraphMetadata(
            name: table.string(Fields.name), description: table.string(Fields.description),
            inputs: table.tables(Fields.inputTensorMetadata).map(tensor),
            outputs: table.tables(Fields.outputTensorMetadata).map(tensor),
            associatedFiles: table.tables(Fields.associatedFiles).map(associatedFile),
            inputProcessUnits: table.tables(Fields.inputProcessUnits).map(processUnit),
            outputProcessUnits: table.tables(Fields.outputProcessUnits).map(processUnit),
            inputTensorGroups: table.tables(Fields.inputTensorGroups).map(tensorGroup),
            outputTensorGroups: table.tables(Fields.outputTensorGroups).map(tensorGroup),
            customMetadata: table.tables(Fields.customMetadata).map(customMetadata))
    }

    private func tensor(_ table: FlatBufferTable) -> TFLiteTensorMetadata {
        typealias Fields = Schema.TensorMetadata
        return TFLiteTensorMetadata(
            name: table.string(Fields.name), description: table.string(Fields.description),
            dimensionNames: table.strings(Fields.dimensionNames),
            content: table.table(Fields.content).map(content),
            processUnits: table.tables(Fields.processUnits).map(processUnit),
            stats: table.table(Fields.stats).map { TFLiteStats(max: $0.floats(Schema.Stats.max), min: $0.floats(Schema.Stats.min)) },
            associatedFiles: table.tables(Fields.associatedFiles).map(associatedFile))
    }

    private func content(_ table: FlatBufferTable) -> TFLiteContent {
        typealias Fields = Schema.Content
        let type: UInt8 = table.scalar(Fields.contentPropertiesType)
        let values = table.table(Fields.contentProperties)
        let properties: TFLiteContent.Properties?
        switch (Schema.name(type, in: Schema.contentPropertiesNames), values) {
        case ("NONE", _): properties = nil
        case ("FeatureProperties", _): properties = .feature
        case ("ImageProperties", let values?):
            let color: Int8 = values.scalar(Schema.ImageProperties.colorSpace)
            properties = .image(
                colorSpace: Schema.name(color, in: Schema.colorSpaceTypeNames),
                defaultSize: values.table(Schema.ImageProperties.defaultSize).map {
                    TFLiteImageSize(width: $0.scalar(Schema.ImageSize.width), height: $0.scalar(Schema.ImageSize.height))
                })
        case ("BoundingBoxProperties", let values?):
            let type: Int8 = values.scalar(Schema.BoundingBoxProperties.type)
            let coordinates: Int8 = values.scalar(Schema.BoundingBoxProperties.coordinateType)
            properties = .boundingBox(
                index: values.integers(Schema.BoundingBoxProperties.index, as: UInt32.self).map { UInt32($0) },
                type: Schema.name(type, in: Schema.boundingBoxTypeNames),
                coordinateType: Schema.name(coordinates, in: Schema.coordinateTypeNames))
        case ("AudioProperties", let values?):
            properties = .audio(
                sampleRate: values.scalar(Schema.AudioProperties.sampleRate),
                channels: values.scalar(Schema.AudioProperties.channels))
        case (let name, _): properties = .other(name)
        }
        return TFLiteContent(
            properties: properties,
            range: table.table(Fields.range).map {
                TFLiteValueRange(min: $0.scalar(Schema.ValueRange.min), max: $0.scalar(Schema.ValueRange.max))
            })
    }

    private func processUnit(_ table: FlatBufferTable) -> TFLiteProcessUnit {
        let type: UInt8 = table.scalar(Schema.ProcessUnit.optionsType)
        let values = table.table(Schema.ProcessUnit.options)
        switch (Schema.name(type, in: Schema.processUnitOptionsNames), values) {
        case ("NONE", _):
            return TFLiteProcessUnit(options: nil)
        case ("NormalizationOptions", let values?):
            return TFLiteProcessUnit(
                options: .normalization(
                    mean: values.floats(Schema.NormalizationOptions.mean),
                    std: values.floats(Schema.NormalizationOptions.std)))
        case ("ScoreCalibrationOptions", let values?):
            let transformation: Int8 = values.scalar(Schema.ScoreCalibrationOptions.scoreTransformation)
            let score: UInt32 = values.scalar(Schema.ScoreCalibrationOptions.defaultScore)
            return TFLiteProcessUnit(
                options: .scoreCalibration(
                    transformation: Schema.name(transformation, in: Schema.scoreTransformationTypeNames),
                    defaultScore: Float(bitPattern: score)))
        case ("ScoreThresholdingOptions", let values?):
            let threshold: UInt32 = values.scalar(Schema.ScoreThresholdingOptions.globalScoreThreshold)
            return TFLiteProcessUnit(options: .scoreThresholding(globalScoreThreshold: Float(bitPattern: threshold)))
        case ("BertTokenizerOptions", let values?):
            return TFLiteProcessUnit(
                options: .bertTokenizer(vocabFiles: values.tables(Schema.BertTokenizerOptions.vocabFile).map(associatedFile)))
        case ("SentencePieceTokenizerOptions", let values?):
            typealias Fields = Schema.SentencePieceTokenizerOptions
            return TFLiteProcessUnit(
                options: .sentencePieceTokenizer(
                    modelFiles: values.tables(Fields.sentencePieceModel).map(associatedFile),
                    vocabFiles: values.tables(Fields.vocabFile).map(associatedFile)))
        case ("RegexTokenizerOptions", let values?):
            typealias Fields = Schema.RegexTokenizerOptions
            return TFLiteProcessUnit(
                options: .regexTokenizer(
                    delimiterPattern: values.string(Fields.delimRegexPattern),
                    vocabFiles: values.tables(Fields.vocabFile).map(associatedFile)))
        case (let name, _):
            return TFLiteProcessUnit(options: .other(name))
        }
    }

    private func associatedFile(_ table: FlatBufferTable) -> TFLiteAssociatedFile {
        typealias Fields = Schema.AssociatedFile
        let type: Int8 = table.scalar(Fields.type)
        return TFLiteAssociatedFile(
            name: table.string(Fields.name) ?? "", description: table.string(Fields.description),
            type: .init(rawValue: Schema.name(type, in: Schema.associatedFileTypeNames)),
            locale: table.string(Fields.locale), version: table.string(Fields.version))
    }

    private func tensorGroup(_ table: FlatBufferTable) -> TFLiteTensorGroup {
        TFLiteTensorGroup(name: table.string(Schema.TensorGroup.name), tensorNames: table.strings(Schema.TensorGroup.tensorNames))
    }

    private func customMetadata(_ table: FlatBufferTable) -> TFLiteCustomMetadata {
        let data = table.vector(Schema.CustomMetadata.data)
        let size = data?.count ?? 0
        return TFLiteCustomMetadata(
            name: table.string(Schema.CustomMetadata.name), size: size,
            data: size <= TFLiteCustomMetadata.keptDataSize ? data.map { bytes.bytes(at: $0.position + 4, length: size) } ?? [] : nil)
    }
}
