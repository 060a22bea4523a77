import Crypto

/// What `depot inspect` reports about a file: its size and SHA-256, and either what the model
/// holds or why it is not a valid model.
///
/// Encodes to the JSON that `depot inspect --json` prints and other tools read:
/// `{"sha256", "size", "schemaVersion", "flatbufferSize", "appendedDataSize", "subgraphs",
/// "signatures", "operators", "metadata", "modelMetadata", "packedFiles", "labelFiles", "valid",
/// "error"}` (model fields `null` when invalid; `modelMetadata` in the JSON form of
/// tflite-support's `MetadataDisplayer`).
///
/// ```swift
/// let inspection = try TFLiteInspection(fileAt: "flowers.tflite")
/// if case .failure(let error) = inspection.result { print(error.message) }
/// ```
public struct TFLiteInspection: Sendable, Encodable {
    /// The file's size in bytes.
    public let size: Int
    /// The file's SHA-256, in lower-case hex.
    public let sha256: String
    /// What the model holds, or why verification failed.
    public let result: Result<TFLiteModelDescription, DepotError>

    /// Maps, hashes and verifies a file.
    /// - Parameters:
    ///   - path: The file's path.
    ///   - policy: What the verifier accepts beyond a well-formed model.
    /// - Throws: ``DepotError`` (`file_unreadable`) only when the file cannot be read; an
    ///   invalid model is reported in ``result``.
    public init(fileAt path: String, policy: TFLiteVerificationPolicy = .default) throws(DepotError) {
        let file = try MappedFile(path: path)
        self = file.withBytes { TFLiteInspection(bytes: $0, policy: policy) }
    }

    /// Hashes and verifies a file held in memory or mapped.
    /// - Parameters:
    ///   - bytes: The whole file.
    ///   - policy: What the verifier accepts beyond a well-formed model.
    public init(bytes: UnsafeRawBufferPointer, policy: TFLiteVerificationPolicy = .default) {
        size = bytes.count
        sha256 = SHA256.digest(streaming: bytes).hex
        result = Result { () throws(DepotError) in try TFLiteVerifier(policy: policy).verify(bytes) }
    }

    private enum CodingKeys: String, CodingKey {
        case sha256, size, schemaVersion, description, flatbufferSize, appendedDataSize, subgraphs,
            signatures, operators, metadata, modelMetadata, packedFiles, labelFiles, valid, error
    }

    private struct SubgraphReport: Encodable {
        let name: String
        let inputs: [TFLiteTensor]
        let outputs: [TFLiteTensor]
    }

    private struct SignatureReport: Encodable {
        let key: String
        let inputs: [String]
        let outputs: [String]
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sha256, forKey: .sha256)
        try container.encode(size, forKey: .size)
        let model = try? result.get()
        try container.encode(model?.schemaVersion, forKey: .schemaVersion)
        try container.encode(model?.description, forKey: .description)
        try container.encode(model?.flatbufferSize, forKey: .flatbufferSize)
        try container.encode(model?.appendedDataSize, forKey: .appendedDataSize)
        try container.encode(
            model?.subgraphs.map { SubgraphReport(name: $0.name, inputs: $0.inputs, outputs: $0.outputs) },
            forKey: .subgraphs)
        try container.encode(
            model?.signatures.map { SignatureReport(key: $0.key, inputs: $0.inputs.map(\.name), outputs: $0.outputs.map(\.name)) },
            forKey: .signatures)
        try container.encode(model?.operators, forKey: .operators)
        try container.encode(model?.metadata, forKey: .metadata)
        try container.encode(model?.modelMetadata, forKey: .modelMetadata)
        try container.encode(model?.packedFiles, forKey: .packedFiles)
        try container.encode(model?.labelFiles, forKey: .labelFiles)
        try container.encode(model != nil, forKey: .valid)
        if case .failure(let error) = result {
            try container.encode(error.message, forKey: .error)
        } else {
            try container.encodeNil(forKey: .error)
        }
    }
}
