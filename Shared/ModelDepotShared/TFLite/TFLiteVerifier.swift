/// Verifies a `.tflite` file completely, in pure Swift, before any interpreter sees it, and
/// describes what it holds.
///
/// LiteRT's own loader crashes, hangs or silently accepts damaged files, so ModelDepot checks
/// every byte a reader could touch: size, identifier `TFL3`, schema version 3, every
/// FlatBuffers offset, vector, string and table, every index the model uses, shapes and
/// tensor sizes without overflow, constant data against shapes and types, external buffers,
/// and the operators ``TFLiteVerificationPolicy`` allows. Each failure is a ``DepotError``
/// with its own code and a message naming the field, index or offset.
///
/// ```swift
/// let file = try MappedFile(path: "mobilenet.tflite")
/// let model = try file.withBytes { try TFLiteVerifier().verify($0) }
/// print(model.inputs.map(\.shape))   // [[1, 224, 224, 3]]
/// ```
public struct TFLiteVerifier: Sendable {
    /// The smallest file that can be a TFLite model: root offset, identifier, one vtable entry.
    public static let minimumSize = 12
    /// Files must be smaller than 2 GiB, the FlatBuffers limit.
    public static let maximumSize = 1 << 31

    /// What the verifier accepts beyond a well-formed model.
    public var policy: TFLiteVerificationPolicy

    /// Creates a verifier.
    /// - Parameter policy: What to accept beyond a well-formed model.
    public init(policy: TFLiteVerificationPolicy = .default) {
        self.policy = policy
    }

    /// Verifies a whole model file held in memory or mapped from disk.
    ///
    /// Reads only the model's structure, not its weights, so its cost follows the number of
    /// tensors and operators, not the file's size.
    /// - Parameter bytes: The complete file. It is only read, and only during the call.
    /// - Returns: What the model holds.
    /// - Throws: ``DepotError`` naming the first check that failed and where.
    public func verify(_ bytes: UnsafeRawBufferPointer) throws(DepotError) -> TFLiteModelDescription {
        try check(FlatBufferBytes(raw: bytes)).description
    }

    /// Verifies a whole model file and lists its tensors with constant data, in subgraph and
    /// tensor order.
    /// - Parameter bytes: The complete file.
    /// - Throws: ``DepotError`` naming the first check that failed and where.
    public func constantTensors(in bytes: UnsafeRawBufferPointer) throws(DepotError) -> [TFLiteConstantTensor] {
        try check(FlatBufferBytes(raw: bytes), listingConstants: true).constants
    }

    /// Verifies a model read in pages on demand (one in an object store): only the pages that
    /// hold its structure are fetched. Blocks while pages are fetched.
    /// - Parameter pages: The file.
    /// - Returns: What the model holds.
    /// - Throws: ``DepotError`` naming the first check that failed and where; when a page could
    ///   not be read, that failure (a `DepotError`, or `unavailable` for another error) instead.
    public func verify(_ pages: PagedBytes) throws(DepotError) -> TFLiteModelDescription {
        let result = Result { () throws(DepotError) in try check(FlatBufferBytes(pages: pages)).description }
        if let failure = pages.failure {
            throw failure as? DepotError ?? DepotError(.unavailable, "Could not read the model to verify it: \(failure).")
        }
        return try result.get()
    }

    private func check(_ buffer: FlatBufferBytes, listingConstants: Bool = false) throws(DepotError) -> (
        description: TFLiteModelDescription, constants: [TFLiteConstantTensor]
    ) {
        guard buffer.count >= Self.minimumSize else {
            throw DepotError(
                .modelTooSmall,
                "The file has \(buffer.count) bytes; a TFLite model has at least \(Self.minimumSize). Check that the whole file was uploaded or downloaded."
            )
        }
        guard buffer.count < Self.maximumSize else {
            throw DepotError(
                .modelTooLarge, "The file has \(buffer.count) bytes; TFLite models must be smaller than 2 GiB (\(Self.maximumSize) bytes).")
        }
        let identifier = (4..<8).map { buffer.load(UInt8.self, at: $0) }
        guard identifier == TFLiteSchema.fileIdentifier else {
            let shown = identifier.map { (32..<127).contains($0) ? String(UnicodeScalar($0)) : "\\x" + String($0, radix: 16) }.joined()
            throw DepotError(
                .wrongFileIdentifier,
                "Bytes 4..<8 are \"\(shown)\", not the TFLite identifier \"TFL3\": this is not a TFLite flatbuffer model. Convert the model with the TFLite converter."
            )
        }
        var structure = FlatBufferVerifier(
            bytes: buffer, tables: TFLiteSchema.tables, unions: TFLiteSchema.unions,
            maximumDepth: policy.maximumDepth, maximumTables: policy.maximumTables,
            rootName: "Model")
        try structure.verifyRoot(TFLiteSchema.TableID.model)
        let model = FlatBufferTable(bytes: buffer, position: buffer.target(ofOffsetAt: 0))
        var checker = TFLiteModelChecker(model: model, fileSize: buffer.count, policy: policy, listsConstants: listingConstants)
        let description = try checker.check(structureExtent: structure.extent, subgraphReferences: structure.subgraphReferences)
        return (description, checker.constants)
    }

    /// Verifies a whole model held in an array.
    /// - Parameter bytes: The complete file.
    /// - Returns: What the model holds.
    /// - Throws: ``DepotError`` naming the first check that failed and where.
    public func verify(_ bytes: [UInt8]) throws(DepotError) -> TFLiteModelDescription {
        let result: Result<TFLiteModelDescription, DepotError> = bytes.withUnsafeBytes { raw in
            Result { () throws(DepotError) in try verify(raw) }
        }
        return try result.get()
    }
}
