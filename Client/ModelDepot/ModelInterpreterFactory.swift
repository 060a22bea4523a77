/// Makes an interpreter for a ``VerifiedModel`` — the only kind of model an interpreter gets,
/// so nothing unverified reaches a runtime whose loader crashes on damaged files.
///
/// `ModelDepotLiteRT`'s `LiteRTLibrary` is one; on Apple platforms an app can wrap
/// TensorFlowLiteSwift's `Interpreter` the same way.
public protocol ModelInterpreterFactory: Sendable {
    /// The interpreter type made.
    associatedtype Interpreter
    /// Loads and prepares a verified model.
    /// - Throws: The runtime's error when it cannot load the model.
    func makeInterpreter(for model: VerifiedModel) throws -> Interpreter
}
