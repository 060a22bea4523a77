import ModelDepot
import ModelDepotShared

/// Runs a loaded model's first signature: all the vision tasks need of an interpreter.
///
/// `ModelDepotLiteRT`'s ``TensorRunnerFactory`` (LiteRT through its C API, loaded with `dlopen`)
/// makes one on Linux and Android; on Apple platforms an app wraps TensorFlowLiteSwift's
/// `Interpreter` or LiteRT's `CompiledModel` in a few lines (docs/tutorials/ios-app.md shows it).
/// One run at a time: the tasks that hold a runner say so.
public protocol TensorRunner: AnyObject {
    /// Runs the model once.
    /// - Parameter inputs: One tensor per input, in the signature's order, of its type and shape.
    /// - Returns: One tensor per output, in order.
    /// - Throws: The interpreter's error (a `DepotError` `signature_mismatch` for inputs that do
    ///   not fit, by convention).
    func run(_ inputs: [TensorValue]) throws -> [TensorValue]
}

/// Loads verified models into runners: the one place a vision task meets an interpreter.
public protocol TensorRunnerFactory: Sendable {
    /// Loads and prepares a verified model (read it through `VerifiedModel/loadVerifiedBytes()`
    /// where the interpreter takes bytes, so that a file changed since its verification is refused).
    /// - Throws: The interpreter's error when it cannot load the model.
    func makeRunner(for model: VerifiedModel) throws -> any TensorRunner
}

/// A runtime whose runners' answers are checked against the verified model before a task reads
/// them, and whose loads and runs are recorded as model-health outcomes (`OutcomeRecorder`):
/// every vision task gets both, whichever interpreter does the work.
struct RecordedRuntime {
    let base: any TensorRunnerFactory
    let outcomes: OutcomeRecorder?

    /// A runner for `model`; its load, and then each of its runs, recorded.
    func makeRunner(for model: VerifiedModel) throws -> any TensorRunner {
        let runner =
            try outcomes.map { outcomes in try outcomes.recordingLoad(of: model) { try base.makeRunner(for: model) } }
            ?? base.makeRunner(for: model)
        return CheckedRunner(base: runner, model: model, outcomes: outcomes)
    }

    /// Records a refusal of `model` by the task itself (inputs or outputs it cannot use) as a failed load.
    func refused(_ model: VerifiedModel, _ error: any Error) {
        outcomes?.record(.loadFailed, code: (error as? DepotError)?.code ?? .unavailable, for: model)
    }
}

/// A runner whose answers must be what the model declares (a failed run otherwise) and whose runs
/// are recorded.
private final class CheckedRunner: TensorRunner {
    let base: any TensorRunner
    let model: VerifiedModel
    let outcomes: OutcomeRecorder?

    init(base: any TensorRunner, model: VerifiedModel, outcomes: OutcomeRecorder?) {
        self.base = base
        self.model = model
        self.outcomes = outcomes
    }

    func run(_ inputs: [TensorValue]) throws -> [TensorValue] {
        guard let outcomes else { return try Self.checked(base.run(inputs), against: model.description.outputs) }
        return try outcomes.recordingRun(of: model) { try Self.checked(base.run(inputs), against: model.description.outputs) }
    }

    /// The outputs, when there is one per declared output, each of its type and shape (a dynamic
    /// dimension, -1 in the signature, may take any size) with exactly the bytes that shape needs.
    /// - Throws: `DepotError` (`signature_mismatch`) naming the output that does not fit.
    static func checked(_ outputs: [TensorValue], against declared: [TFLiteTensor]) throws(DepotError) -> [TensorValue] {
        guard outputs.count == declared.count else {
            throw DepotError(.signatureMismatch, "The runtime returned \(outputs.count) outputs; the model declares \(declared.count).")
        }
        for (index, (value, tensor)) in zip(outputs, declared).enumerated() {
            let signature = tensor.shapeSignature.count == tensor.shape.count ? tensor.shapeSignature : tensor.shape
            let fits =
                value.type == tensor.type && value.shape.count == tensor.shape.count
                && zip(value.shape, zip(tensor.shape, signature)).allSatisfy { $0 >= 0 && ($0 == $1.0 || $1.1 == -1) }
            guard fits, let bytes = Self.byteCount(value), bytes == value.bytes.count else {
                throw DepotError(
                    .signatureMismatch,
                    "Output \(index) came back as \(value.type) \(value.shape) in \(value.bytes.count) bytes; the model declares \(tensor.type) \(tensor.shape)."
                )
            }
        }
        return outputs
    }

    /// The bytes a value's shape needs, or `nil` when its size overflows or its type has none.
    private static func byteCount(_ value: TensorValue) -> Int? {
        guard let bits = value.type.bitsPerElement else { return nil }
        var total = bits
        for dimension in value.shape {
            let (product, overflow) = total.multipliedReportingOverflow(by: dimension)
            guard !overflow else { return nil }
            total = product
        }
        return total > Int.max - 7 ? nil : (total + 7) / 8
    }
}
