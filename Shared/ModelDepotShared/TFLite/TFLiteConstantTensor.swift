/// A tensor whose data is in the file (a weight or other constant), and where: what a patch
/// maker lines up between two versions of a model.
public struct TFLiteConstantTensor: Sendable, Hashable {
    /// Where a tensor is read in its subgraph's graph.
    public struct Use: Sendable, Hashable {
        /// The operator's index in the subgraph.
        public var operatorIndex: Int
        /// The input's place among the operator's inputs.
        public var inputIndex: Int

        /// Creates a use.
        public init(operatorIndex: Int, inputIndex: Int) {
            self.operatorIndex = operatorIndex
            self.inputIndex = inputIndex
        }
    }

    /// The index of the tensor's subgraph.
    public var subgraph: Int
    /// The tensor's name.
    public var name: String
    /// The element type.
    public var type: TFLiteTensorType
    /// The data's bytes in the file.
    public var data: Range<Int>
    /// The first operator input that reads it, if any does.
    public var firstUse: Use?

    /// Creates a description of a constant tensor.
    public init(subgraph: Int, name: String, type: TFLiteTensorType, data: Range<Int>, firstUse: Use? = nil) {
        self.subgraph = subgraph
        self.name = name
        self.type = type
        self.data = data
        self.firstUse = firstUse
    }
}
