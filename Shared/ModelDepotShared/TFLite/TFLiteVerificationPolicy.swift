/// What the verifier accepts beyond a well-formed model.
///
/// The default accepts mainstream real models: float, int8/uint8 quantized, fp16 weights,
/// several subgraphs, control flow, resource variables, custom and Flex operators, sparse
/// tensors and appended archives of associated files that inflate to at most 256 MiB. Tighten
/// it where the interpreter that will run the model cannot run more:
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
    /// The most bytes all associated files (the zip appended to the model) may inflate to
    /// together, counted while inflating: a file over it is `associated_files_too_large`.
    public var maximumAssociatedFilesSize: Int

    /// The default ``maximumAssociatedFilesSize``, 256 MiB: far above real label and vocabulary
    /// files, far below what a zip bomb inflates to.
    public static let defaultMaximumAssociatedFilesSize = 256 << 20

    /// Creates a policy.
    /// - Parameters:
    ///   - allowsCustomOperators: Accept custom operators.
    ///   - allowsFlexOperators: Accept Flex operators (needs `allowsCustomOperators`).
    ///   - allowsSparseTensors: Accept sparse tensors.
    ///   - maximumDepth: The deepest table nesting accepted.
    ///   - maximumTables: The most tables accepted.
    ///   - maximumAssociatedFilesSize: The most bytes all associated files may inflate to.
    public init(
        allowsCustomOperators: Bool = true, allowsFlexOperators: Bool = true,
        allowsSparseTensors: Bool = true, maximumDepth: Int = 64, maximumTables: Int = 1_000_000,
        maximumAssociatedFilesSize: Int = defaultMaximumAssociatedFilesSize
    ) {
        self.allowsCustomOperators = allowsCustomOperators
        self.allowsFlexOperators = allowsFlexOperators
        self.allowsSparseTensors = allowsSparseTensors
        self.maximumDepth = maximumDepth
        self.maximumTables = maximumTables
        self.maximumAssociatedFilesSize = maximumAssociatedFilesSize
    }

    /// Accepts mainstream real models (see the type's documentation).
    public static let `default` = TFLiteVerificationPolicy()

    /// Accepts builtin operators only: no custom, no Flex operators, no sparse tensors.
    public static let builtinOperatorsOnly = TFLiteVerificationPolicy(
        allowsCustomOperators: false, allowsFlexOperators: false, allowsSparseTensors: false)
}
