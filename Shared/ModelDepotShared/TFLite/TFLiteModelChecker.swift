/// The checks on a structurally verified model that need TFLite's meaning: indices in range,
/// shapes, sizes, constant data, quantization, external buffers and the policy. Builds the
/// ``TFLiteModelDescription`` as it goes.
struct TFLiteModelChecker {
    typealias Schema = TFLiteSchema

    private struct Operator {
        let name: String
        let isCustom: Bool
    }

    private struct Tensor {
        let description: TFLiteTensor
        /// The product of the dimensions (checked not to overflow).
        let elementCount: Int
        /// Where its constant data (a weight or other constant) is in the file, when it has some.
        let data: Range<Int>?

        var isConstant: Bool { data != nil }
    }

    let model: FlatBufferTable
    let fileSize: Int
    let policy: TFLiteVerificationPolicy
    private(set) var buffers: [FlatBufferTable] = []
    private(set) var bufferSizes: [Int] = []
    /// Whether ``check(structureExtent:subgraphReferences:)`` lists ``constants`` (a patch maker's
    /// need; verification alone skips the work).
    let listsConstants: Bool
    /// Every tensor with constant data, where the data is, and its first use, when ``listsConstants``.
    private(set) var constants: [TFLiteConstantTensor] = []
    private var externalEnd = 0

    init(model: FlatBufferTable, fileSize: Int, policy: TFLiteVerificationPolicy, listsConstants: Bool = false) {
        self.model = model
        self.fileSize = fileSize
        self.policy = policy
        self.listsConstants = listsConstants
    }

    mutating func check(
        structureExtent: Int,
        subgraphReferences: [FlatBufferVerifier.SubgraphReference]
    ) throws(DepotError) -> TFLiteModelDescription {
        let version: UInt32 = model.scalar(Schema.Model.version)
        guard version == Schema.version else {
            throw DepotError(
                .unsupportedSchemaVersion,
                "Model.version is \(version); only TFLite schema version \(Schema.version) is supported. Re-convert the model with a current TFLite converter."
            )
        }
        let subgraphs = model.tables(Schema.Model.subgraphs)
        guard !subgraphs.isEmpty else {
            throw DepotError(.noSubgraphs, "Model.subgraphs is empty: the model has nothing to run. Re-convert the model.")
        }
        for reference in subgraphReferences where reference.value < 0 || Int(reference.value) >= subgraphs.count {
            throw DepotError(
                .indexOutOfRange,
                "\(reference.path) is \(reference.value), but the model has \(subgraphs.count) subgraphs (0..<\(subgraphs.count)); the file is damaged."
            )
        }
        try checkBuffers()
        let operators = try checkOperatorCodes()
        var described: [TFLiteSubgraph] = []
        var tensorCounts: [Int] = []
        for (index, subgraph) in subgraphs.enumerated() {
            let path = "Model.subgraphs[\(index)]"
            let tensors = try checkTensors(of: subgraph, path: path)
            let tensorCount = tensors.count
            let uses = try checkOperators(of: subgraph, tensors: tensors, operators: operators, path: path)
            for (tensorIndex, tensor) in tensors.enumerated() where listsConstants {
                guard let data = tensor.data else { continue }
                constants.append(
                    TFLiteConstantTensor(
                        subgraph: index, name: tensor.description.name, type: tensor.description.type, data: data,
                        firstUse: uses[tensorIndex]))
            }
            let inputs = try indices(
                subgraph.integers(Schema.SubGraph.inputs, as: Int32.self), below: tensorCount, path: "\(path).inputs", what: "tensors")
            let outputs = try indices(
                subgraph.integers(Schema.SubGraph.outputs, as: Int32.self), below: tensorCount, path: "\(path).outputs", what: "tensors")
            described.append(
                TFLiteSubgraph(
                    name: subgraph.string(Schema.SubGraph.name) ?? "",
                    inputs: inputs.map { tensors[$0].description }, outputs: outputs.map { tensors[$0].description },
                    tensorCount: tensorCount,
                    operatorCount: subgraph.vector(Schema.SubGraph.operators)?.count ?? 0))
            tensorCounts.append(tensorCount)
        }
        let signatures = try checkSignatures(tensorCounts: tensorCounts)
        let (metadata, metadataBuffer) = try checkMetadata()
        let flatbufferSize = paddedEnd(structureExtent)
        let appendedStart = max(flatbufferSize, externalEnd)
        let report = try checkModelMetadata(bufferIndex: metadataBuffer, subgraphs: described, appendedStart: appendedStart)
        return TFLiteModelDescription(
            schemaVersion: Int(version), description: model.string(Schema.Model.description),
            subgraphs: described, signatures: signatures,
            operators: TFLiteOperators(
                builtin: Set(operators.filter { !$0.isCustom }.map(\.name)).sorted(),
                custom: Set(operators.filter(\.isCustom).map(\.name)).sorted()),
            metadata: metadata, flatbufferSize: flatbufferSize,
            appendedDataSize: fileSize - appendedStart,
            modelMetadata: report.metadata, packedFiles: report.packedFiles, labelFiles: report.labelFiles)
    }

    /// The end of the flatbuffer: the last byte any object occupies, plus the zero padding a
    /// FlatBuffers builder leaves up to its 16-byte alignment.
    private func paddedEnd(_ extent: Int) -> Int {
        var end = extent
        while end < fileSize, end % 16 != 0, model.bytes.load(UInt8.self, at: end) == 0 { end += 1 }
        return end
    }

    private mutating func checkBuffers() throws(DepotError) {
        buffers = model.tables(Schema.Model.buffers)
        bufferSizes = []
        bufferSizes.reserveCapacity(buffers.count)
        for (index, buffer) in buffers.enumerated() {
            let offset: UInt64 = buffer.scalar(Schema.Buffer.offset)
            let size: UInt64 = buffer.scalar(Schema.Buffer.size)
            // Offset 0 and 1 mean "no external data" in the schema.
            guard offset > 1 else {
                bufferSizes.append(buffer.vector(Schema.Buffer.data)?.count ?? 0)
                continue
            }
            let (end, overflow) = offset.addingReportingOverflow(size)
            guard !overflow, end <= UInt64(fileSize) else {
                throw DepotError(
                    .externalBufferOutOfBounds,
                    "Model.buffers[\(index)] points to \(size) bytes at file offset \(offset), past the end of the file (\(fileSize) bytes); the file is truncated or damaged."
                )
            }
            externalEnd = max(externalEnd, Int(end))
            bufferSizes.append(Int(size))
        }
    }

    private func checkOperatorCodes() throws(DepotError) -> [Operator] {
        var operators: [Operator] = []
        for (index, code) in model.tables(Schema.Model.operatorCodes).enumerated() {
            let path = "Model.operatorCodes[\(index)]"
            let deprecated: Int8 = code.scalar(Schema.OperatorCode.deprecatedBuiltinCode)
            let builtin: Int32 = code.scalar(Schema.OperatorCode.builtinCode)
            let effective = max(Int(deprecated), Int(builtin))
            guard effective >= 0 else {
                throw DepotError(
                    .invalidOperatorCode, "\(path) has builtin code \(effective); operator codes are never negative. The file is damaged.")
            }
            guard effective == Schema.customOperatorCode else {
                let names = Schema.builtinOperatorNames
                let name = effective < names.count && !names[effective].isEmpty ? names[effective] : "BUILTIN_\(effective)"
                operators.append(Operator(name: name, isCustom: false))
                continue
            }
            guard let name = code.string(Schema.OperatorCode.customCode), !name.isEmpty else {
                throw DepotError(.invalidOperatorCode, "\(path) is a custom operator without a name (customCode); the file is damaged.")
            }
            guard policy.allowsCustomOperators else {
                throw DepotError(
                    .customOperatorNotAllowed,
                    "\(path) is the custom operator '\(name)', and this policy accepts builtin operators only. Allow custom operators if the app's interpreter registers '\(name)'."
                )
            }
            guard policy.allowsFlexOperators || !name.hasPrefix("Flex") else {
                throw DepotError(
                    .flexOperatorNotAllowed,
                    "\(path) is the TensorFlow select operator '\(name)', and this policy does not accept Flex operators. Allow them if the app links the Flex delegate, or convert without SELECT_TF_OPS."
                )
            }
            operators.append(Operator(name: name, isCustom: true))
        }
        return operators
    }

    /// Checks every tensor of a subgraph and describes each.
    private func checkTensors(of subgraph: FlatBufferTable, path: String) throws(DepotError) -> [Tensor] {
        let tensors = subgraph.tables(Schema.SubGraph.tensors)
        var described: [Tensor] = []
        described.reserveCapacity(tensors.count)
        for (index, tensor) in tensors.enumerated() {
            described.append(try checkTensor(tensor, index: index, path: "\(path).tensors[\(index)]"))
        }
        return described
    }

    private func checkTensor(_ tensor: FlatBufferTable, index: Int, path: String) throws(DepotError) -> Tensor {
        let rawType: Int8 = tensor.scalar(Schema.Tensor.type)
        guard let type = TFLiteTensorType(rawValue: Int(rawType)) else {
            throw DepotError(
                .unknownTensorType,
                "\(path).type is \(rawType), which is not a TFLite TensorType; the file is damaged or needs a newer ModelDepot.")
        }
        let shape = tensor.integers(Schema.Tensor.shape, as: Int32.self)
        if let dimension = shape.firstIndex(where: { $0 < 0 }) {
            throw DepotError(
                .invalidShape,
                "\(path).shape[\(dimension)] is \(shape[dimension]); dimensions are never negative (dynamic ones belong in shapeSignature)."
            )
        }
        let signature =
            tensor.fieldPosition(Schema.Tensor.shapeSignature) == nil
            ? shape : tensor.integers(Schema.Tensor.shapeSignature, as: Int32.self)
        guard signature.count == shape.count, signature.allSatisfy({ $0 >= -1 }) else {
            throw DepotError(
                .invalidShape,
                "\(path).shapeSignature \(signature) does not fit shape \(shape): it needs the same rank, with -1 only for dynamic dimensions."
            )
        }
        let bufferIndex: UInt32 = tensor.scalar(Schema.Tensor.buffer)
        guard Int(bufferIndex) < buffers.count else {
            throw DepotError(
                .indexOutOfRange,
                "\(path).buffer is \(bufferIndex), but the model has \(buffers.count) buffers (0..<\(buffers.count)); the file is damaged.")
        }
        let isSparse = tensor.fieldPosition(Schema.Tensor.sparsity) != nil
        if isSparse, !policy.allowsSparseTensors {
            throw DepotError(.sparseTensorNotAllowed, "\(path) is a sparse tensor, and this policy does not accept sparse tensors.")
        }
        let elementCount = try elementCount(of: shape, type: type, path: path)
        let byteCount = try type.bitsPerElement.map { bits throws(DepotError) in
            let (total, overflow) = elementCount.multipliedReportingOverflow(by: bits)
            let (rounded, overflowRounding) = total.addingReportingOverflow(7)
            guard !overflow, !overflowRounding else { throw sizeOverflow(shape, type, path) }
            return rounded / 8
        }
        let dataSize = bufferSizes[Int(bufferIndex)]
        if dataSize > 0, !isSparse, let byteCount, dataSize != byteCount {
            throw DepotError(
                .constantDataMismatch,
                "\(path) is \(type) with shape \(shape), which needs \(byteCount) bytes, but its buffer \(bufferIndex) holds \(dataSize); the file is damaged."
            )
        }
        let description = TFLiteTensor(
            index: index, name: tensor.string(Schema.Tensor.name) ?? "", type: type, shape: shape,
            shapeSignature: signature,
            quantization: try quantization(of: tensor, shape: shape, path: path))
        return Tensor(
            description: description, elementCount: elementCount,
            data: dataSize > 0 ? bufferRange(Int(bufferIndex)) : nil)
    }

    private func elementCount(of shape: [Int], type: TFLiteTensorType, path: String) throws(DepotError) -> Int {
        var total = 1
        for dimension in shape {
            let (product, overflow) = total.multipliedReportingOverflow(by: dimension)
            guard !overflow else { throw sizeOverflow(shape, type, path) }
            total = product
        }
        return total
    }

    private func sizeOverflow(_ shape: [Int], _ type: TFLiteTensorType, _ path: String) -> DepotError {
        DepotError(.tensorSizeOverflow, "\(path) is \(type) with shape \(shape): its size overflows a 64-bit integer; the file is damaged.")
    }

    private func quantization(of tensor: FlatBufferTable, shape: [Int], path: String) throws(DepotError) -> TFLiteQuantization {
        guard let parameters = tensor.table(Schema.Tensor.quantization) else { return .none }
        let scales = parameters.floats(Schema.QuantizationParameters.scale)
        guard !scales.isEmpty else { return .none }
        let zeroPoints = parameters.integers(Schema.QuantizationParameters.zeroPoint, as: Int64.self)
        let dimension = Int(parameters.scalar(Schema.QuantizationParameters.quantizedDimension, default: Int32(0)))
        guard zeroPoints.count == scales.count else {
            throw DepotError(
                .invalidQuantization,
                "\(path).quantization has \(scales.count) scales and \(zeroPoints.count) zero points; they must be as many.")
        }
        if scales.count > 1 {
            guard dimension >= 0, dimension < shape.count, shape[dimension] == scales.count else {
                throw DepotError(
                    .invalidQuantization,
                    "\(path).quantization has \(scales.count) per-channel scales along dimension \(dimension), but the tensor's shape is \(shape)."
                )
            }
        }
        return TFLiteQuantization(scales: scales, zeroPoints: zeroPoints, quantizedDimension: dimension)
    }

    /// Checks every operator of a subgraph. Returns, when ``listsConstants``, where each constant
    /// tensor is first read: by which operator, as which input (by tensor index; else empty).
    private func checkOperators(of subgraph: FlatBufferTable, tensors: [Tensor], operators: [Operator], path: String) throws(DepotError)
        -> [TFLiteConstantTensor.Use?]
    {
        let tensorCount = tensors.count
        var uses = [TFLiteConstantTensor.Use?](repeating: nil, count: listsConstants ? tensorCount : 0)
        for (index, op) in subgraph.tables(Schema.SubGraph.operators).enumerated() {
            let opPath = "\(path).operators[\(index)]"
            let opcode: UInt32 = op.scalar(Schema.Operator.opcodeIndex)
            guard Int(opcode) < operators.count else {
                throw DepotError(
                    .indexOutOfRange,
                    "\(opPath).opcodeIndex is \(opcode), but the model has \(operators.count) operator codes (0..<\(operators.count)); the file is damaged."
                )
            }
            let inputs = try indices(
                op.integers(Schema.Operator.inputs, as: Int32.self), below: tensorCount,
                path: "\(opPath).inputs", what: "tensors", allowsOptional: true)
            let outputs = try indices(
                op.integers(Schema.Operator.outputs, as: Int32.self), below: tensorCount,
                path: "\(opPath).outputs", what: "tensors")
            _ = try indices(
                op.integers(Schema.Operator.intermediates, as: Int32.self), below: tensorCount,
                path: "\(opPath).intermediates", what: "tensors")
            if let shared = outputs.first(where: inputs.contains) {
                throw DepotError(
                    .tensorIsInputAndOutput,
                    "\(opPath) uses tensor \(shared) as both an input and an output; an interpreter would read what it overwrites. The file is damaged."
                )
            }
            try checkConstantDequantization(operators[Int(opcode)], inputs: inputs, outputs: outputs, tensors: tensors, path: opPath)
            for (slot, input) in inputs.enumerated() where listsConstants && input >= 0 && tensors[input].isConstant && uses[input] == nil {
                uses[input] = TFLiteConstantTensor.Use(operatorIndex: index, inputIndex: slot)
            }
        }
        return uses
    }

    /// LiteRT's CPU path (XNNPack) converts a constant that DEQUANTIZE reads (fp16 or int8
    /// weights) ahead of time, reading as many elements as the *output* declares: an output
    /// larger than its constant input makes it read past the data (seen as SIGBUS).
    private func checkConstantDequantization(
        _ op: Operator, inputs: [Int], outputs: [Int], tensors: [Tensor],
        path: String
    ) throws(DepotError) {
        guard !op.isCustom, op.name == "DEQUANTIZE", let input = inputs.first, tensors[input].isConstant,
            let output = outputs.first
        else { return }
        let inputShape = tensors[input].description.shape
        let outputShape = tensors[output].description.shape
        guard tensors[output].elementCount == tensors[input].elementCount else {
            throw DepotError(
                .invalidShape,
                "\(path) dequantizes constant tensor \(input) of shape \(inputShape) into tensor \(output) of shape \(outputShape); DEQUANTIZE keeps the element count. The file is damaged."
            )
        }
    }

    private func checkSignatures(tensorCounts: [Int]) throws(DepotError) -> [TFLiteSignature] {
        var signatures: [TFLiteSignature] = []
        for (index, signature) in model.tables(Schema.Model.signatureDefs).enumerated() {
            let path = "Model.signatureDefs[\(index)]"
            let subgraph = Int(signature.scalar(Schema.SignatureDef.subgraphIndex, default: UInt32(0)))
            guard subgraph < tensorCounts.count else {
                throw DepotError(
                    .indexOutOfRange,
                    "\(path).subgraphIndex is \(subgraph), but the model has \(tensorCounts.count) subgraphs; the file is damaged.")
            }
            func arguments(_ slot: UInt16, _ name: String) throws(DepotError) -> [TFLiteSignature.Argument] {
                var result: [TFLiteSignature.Argument] = []
                for (position, map) in signature.tables(slot).enumerated() {
                    let tensor = Int(map.scalar(Schema.TensorMap.tensorIndex, default: UInt32(0)))
                    guard tensor < tensorCounts[subgraph] else {
                        throw DepotError(
                            .indexOutOfRange,
                            "\(path).\(name)[\(position)].tensorIndex is \(tensor), but subgraph \(subgraph) has \(tensorCounts[subgraph]) tensors; the file is damaged."
                        )
                    }
                    result.append(TFLiteSignature.Argument(name: map.string(Schema.TensorMap.name) ?? "", tensorIndex: tensor))
                }
                return result
            }
            signatures.append(
                TFLiteSignature(
                    key: signature.string(Schema.SignatureDef.signatureKey) ?? "",
                    subgraphIndex: subgraph,
                    inputs: try arguments(Schema.SignatureDef.inputs, "inputs"),
                    outputs: try arguments(Schema.SignatureDef.outputs, "outputs")))
        }
        return signatures
    }

    /// The bytes of a buffer in the file: its data vector, or the external range it points to.
    func bufferRange(_ index: Int) -> Range<Int> {
        let buffer = buffers[index]
        let offset: UInt64 = buffer.scalar(Schema.Buffer.offset)
        if offset > 1 { return Int(offset)..<(Int(offset) + bufferSizes[index]) }
        guard let data = buffer.vector(Schema.Buffer.data) else { return 0..<0 }
        return (data.position + 4)..<(data.position + 4 + data.count)
    }

    /// The names of the metadata entries, and the buffer of `TFLITE_METADATA` if there is one.
    private func checkMetadata() throws(DepotError) -> ([String], Int?) {
        _ = try indices(
            model.integers(Schema.Model.metadataBuffer, as: Int32.self), below: buffers.count,
            path: "Model.metadataBuffer", what: "buffers")
        var names: [String] = []
        var metadataBuffer: Int?
        for (index, entry) in model.tables(Schema.Model.metadata).enumerated() {
            let buffer: UInt32 = entry.scalar(Schema.Metadata.buffer)
            guard Int(buffer) < buffers.count else {
                throw DepotError(
                    .indexOutOfRange,
                    "Model.metadata[\(index)].buffer is \(buffer), but the model has \(buffers.count) buffers; the file is damaged.")
            }
            let name = entry.string(Schema.Metadata.name) ?? ""
            if name == TFLiteMetadataSchema.metadataName, metadataBuffer == nil { metadataBuffer = Int(buffer) }
            names.append(name)
        }
        return (names, metadataBuffer)
    }

    /// Checks a list of indices into a list of `count` items; `-1` passes where `allowsOptional`.
    private func indices(
        _ values: [Int], below count: Int, path: String, what: String,
        allowsOptional: Bool = false
    ) throws(DepotError) -> [Int] {
        for (position, value) in values.enumerated() where value >= count || value < (allowsOptional ? -1 : 0) {
            if value == -1 {
                throw DepotError(
                    .optionalTensorNotAllowed,
                    "\(path)[\(position)] is -1 (no tensor), which only optional operator inputs may use; the file is damaged.")
            }
            throw DepotError(
                .indexOutOfRange, "\(path)[\(position)] is \(value), but there are \(count) \(what) (0..<\(count)); the file is damaged.")
        }
        return values.filter { $0 >= 0 }
    }
}
