/// The inputs and outputs an app expects a model to have, as ML Kit's
/// `ModelInputOutputOptions` states them: per index, an element type and dimensions.
///
/// ```swift
/// let expected = TFLiteIOExpectation(
///     inputs: [.init(index: 0, type: .float32, shape: [1, 224, 224, 3])],
///     outputs: [.init(index: 0, type: .float32, shape: [1, 1001])])
/// try expected.check(model)
/// ```
public struct TFLiteIOExpectation: Sendable, Hashable, Codable {
    /// One expected tensor: its position among the inputs or outputs, type and dimensions.
    public struct Tensor: Sendable, Hashable, Codable {
        /// The position among the first subgraph's inputs or outputs.
        public var index: Int
        /// The element type.
        public var type: TFLiteTensorType
        /// The dimensions; matches the tensor's shape or its shape signature (`-1` for dynamic).
        public var shape: [Int]

        /// Creates an expected tensor.
        /// - Parameters:
        ///   - index: The position among the inputs or outputs.
        ///   - type: The element type.
        ///   - shape: The dimensions, `-1` for a dynamic one.
        public init(index: Int, type: TFLiteTensorType, shape: [Int]) {
            self.index = index
            self.type = type
            self.shape = shape
        }
    }

    /// Expected inputs; positions not listed are not checked.
    public var inputs: [Tensor]
    /// Expected outputs; positions not listed are not checked.
    public var outputs: [Tensor]

    /// Creates an expectation.
    /// - Parameters:
    ///   - inputs: Expected inputs.
    ///   - outputs: Expected outputs.
    public init(inputs: [Tensor] = [], outputs: [Tensor] = []) {
        self.inputs = inputs
        self.outputs = outputs
    }

    /// Checks a verified model's first subgraph against the expectation.
    /// - Parameter model: The model to check.
    /// - Throws: ``DepotError`` with code `signature_mismatch` naming the tensor, what was
    ///   expected and what the model has.
    public func check(_ model: TFLiteModelDescription) throws(DepotError) {
        try check(inputs, against: model.inputs, role: "input")
        try check(outputs, against: model.outputs, role: "output")
    }

    private func check(_ expected: [Tensor], against actual: [TFLiteTensor], role: String) throws(DepotError) {
        for tensor in expected {
            guard tensor.index >= 0, tensor.index < actual.count else {
                throw DepotError(.signatureMismatch, "The app expects \(role) \(tensor.index), but the model has \(actual.count) \(role)s.")
            }
            let found = actual[tensor.index]
            guard found.type == tensor.type, found.shape == tensor.shape || found.shapeSignature == tensor.shape else {
                throw DepotError(
                    .signatureMismatch,
                    "The app expects \(role) \(tensor.index) as \(tensor.type) \(tensor.shape), but the model's \(role) \(tensor.index) ('\(found.name)') is \(found.type) \(found.shapeSignature). Update the app's expectation or upload a matching model."
                )
            }
        }
    }
}
