import ModelDepot
import ModelDepotShared

/// Classifies images with a verified model, as ML Kit's custom image classifier and the TFLite
/// Task Library's `ImageClassifier` do: the image resized to the model's input, normalized as
/// its metadata says, run by any ``TensorRunnerFactory`` (LiteRT, TensorFlowLiteSwift), and the
/// scores of the first output named by the labels, best first.
///
/// ```swift
/// let classifier = try ImageClassifier(model: verified, runtime: runtime)
/// let image = try PixelBuffer(png: Array(try Data(contentsOf: photo)))
/// for category in try classifier.classify(image) { print(category.label, category.score) }
/// ```
public final class ImageClassifier: @unchecked Sendable {
    // @unchecked: the runner runs one classification at a time (documented), as interpreters do.

    /// What a classification returns.
    public struct Options: Sendable {
        /// At most this many categories (ML Kit's default, 10).
        public var maximumResults = 10
        /// Categories scoring below this are left out; `nil` takes the metadata's score threshold,
        /// else 0.
        public var scoreThreshold: Float?
        /// The label file's locale (`en`, `fr`, …) when the metadata has several; `nil` for its first.
        public var locale: String?

        /// Creates options.
        public init(maximumResults: Int = 10, scoreThreshold: Float? = nil, locale: String? = nil) {
            self.maximumResults = maximumResults
            self.scoreThreshold = scoreThreshold
            self.locale = locale
        }
    }

    /// One class and its score.
    public struct Category: Sendable, Hashable {
        /// The position in the output.
        public var index: Int
        /// The label (`""` when the model has no label for it).
        public var label: String
        /// The score, dequantized for a quantized output.
        public var score: Float
    }

    private let runner: any TensorRunner
    private let input: ImageTensorInput
    private let output: TFLiteTensor
    private let labels: [String]
    private let threshold: Float
    private let maximumResults: Int

    /// - Parameters:
    ///   - model: A verified model with an image input and a `[1, N]` float32 or uint8 output.
    ///   - runtime: The interpreter that runs the model.
    ///   - options: What a classification returns.
    ///   - outcomes: Where to record the load, each run and its latency (`ModelDownloader.outcomes`);
    ///     a model the task cannot use is recorded as a load failure.
    /// - Throws: `DepotError`: `unsupported_model` for other inputs or outputs; the runtime's failures.
    public convenience init(
        model: VerifiedModel, runtime: any TensorRunnerFactory, options: Options = Options(),
        outcomes: OutcomeRecorder? = nil
    ) throws {
        try self.init(checking: model, runtime: RecordedRuntime(base: runtime, outcomes: outcomes), options: options)
    }

    private init(checking model: VerifiedModel, runtime: RecordedRuntime, options: Options) throws {
        do {
            try Self.check(model)
        } catch {
            runtime.refused(model, error)
            throw error
        }
        let description = model.description
        let tensors = description.modelMetadata?.subgraphs.first
        input = try ImageTensorInput(firstInputOf: description)
        output = description.outputs[0]
        labels = model.labels(locale: options.locale)
        threshold = options.scoreThreshold ?? tensors?.outputs.first?.scoreThreshold ?? 0
        maximumResults = options.maximumResults
        runner = try runtime.makeRunner(for: model)
    }

    /// Refuses a model whose first input is no image or whose first output no `[1, classes]` scores.
    private static func check(_ model: VerifiedModel) throws {
        let description = model.description
        _ = try ImageTensorInput(firstInputOf: description)
        guard let scores = description.outputs.first, [.float32, .uint8].contains(scores.type), scores.shape.count == 2,
            scores.shape[0] == 1
        else {
            throw DepotError(
                .unsupportedModel,
                "The model's first output is \(description.outputs.first.map { "\($0.type) \($0.shape)" } ?? "missing"); a classifier's is float32 or uint8 [1, classes]."
            )
        }
    }

    /// Classifies an image, or a region of it.
    /// - Parameters:
    ///   - image: RGB or RGBA pixels (alpha is ignored).
    ///   - region: The part of the image to classify; the whole image when `nil`.
    /// - Returns: At most `maximumResults` categories scoring at least the threshold, best first
    ///   (equal scores by index).
    /// - Throws: `DepotError` for a region outside the image, or the runtime's failures.
    public func classify(_ image: PixelBuffer, region: PixelRegion? = nil) throws -> [Category] {
        let resized = try image.rgb().resized(width: input.width, height: input.height, region: region)
        let outputs = try runner.run([input.value(for: resized)])
        let scores = Self.scores(outputs[0], quantization: output.quantization)
        let ranked = scores.enumerated().sorted { $0.element != $1.element ? $0.element > $1.element : $0.offset < $1.offset }
        return ranked.prefix { $0.element >= threshold }.prefix(maximumResults).map {
            Category(index: $0.offset, label: $0.offset < labels.count ? labels[$0.offset] : "", score: $0.element)
        }
    }

    /// Float32 values as they are; uint8 dequantized (`scale * (q - zeroPoint)`).
    static func scores(_ value: TensorValue, quantization: TFLiteQuantization) -> [Float] {
        if let floats = value.float32Values { return floats }
        let scale = quantization.scales.first ?? 1
        let zeroPoint = quantization.zeroPoints.first ?? 0
        // In Float: the zero point is the model's, and any Int, so `Int - zeroPoint` could overflow.
        return value.bytes.map { scale * (Float($0) - Float(zeroPoint)) }
    }
}
