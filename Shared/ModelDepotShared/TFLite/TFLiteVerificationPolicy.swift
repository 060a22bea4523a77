/// What the verifier accepts beyond a well-formed model.
///
/// The default accepts mainstream real models: float, int8/uint8 quantized, fp16 weights,
/// several subgraphs, control flow, resource variables, custom and Flex operators, sparse
/// tensors and appended archives. Tighten it where the interpreter that will run the model
/// cannot run more:
///
/// ```swift
/// let verifier = TFLiteVerifier(policy: .builtinOperatorsOnly)
/// ```
public struct TFLiteVerificationPolicy: Sendable, Hashable {
    /// Whether operators with `BuiltinOperator.CUSTOM` may appear.
    public var allowsCustomOperators: Bool
    /// Whether TensorFlow select ("Flex…") custom operators may appear.
    public var allowsFlexOperators: Bool
    /// Whether tensors may carry sparsity parameters.
    public var allowsSparseTensors: Bool
    /// The deepest table nesting accepted (FlatBuffers' default is 64).
    public var maximumDepth: Int
    /// The most tables accepted in one file (FlatBuffers' default is 1,000,000).
    public var maximumTables: Int

    /// Creates a policy.
    /// - Parameters:
    ///   - allowsCustomOperators: Accept custom operators.
    ///   - allowsFlexOperators: Accept Flex operators (needs `allowsCustomOperators`).
    ///   - allowsSparseTensors: Accept sparse tensors.
    ///   - maximumDepth: The deepest table nesting accepted.
    ///   - maximumTables: The most tables accepted.
    public init(allowsCustomOperators: Bool = true, allowsFlexOperators: Bool = true,
                allowsSparseTensors: Bool = true, maximumDepth: Int = 64, maximumTables: Int = 1_000_000) {
        self.allowsCustomOperators = allowsCustomOperators
        self.allowsFlexOperators = allowsFlexOperators
        self.allowsSparseTensors = allowsSparseTensors
        self.maximumDepth = maximumDepth
        self.maximumTables = maximumTables
    }

    /// Accepts mainstream real models (see the type's documentation).
    public static let `default` = TFLiteVerificationPolicy()

    /// Accepts builtin operators only: no custom, no Flex operators, no sparse tensors.
    public static let builtinOperatorsOnly = TFLiteVerificationPolicy(
        allowsCustomOperators: false, allowsFlexOperators: false, allowsSparseTensors: false)
}
