import ModelDepot
import ModelDepotShared

/// Detects objects with a verified SSD-style model whose outputs are those of
/// `TFLite_Detection_PostProcess` (boxes, classes, scores, count), as AutoML Vision Edge object
/// detection exports and the TFLite Task Library's `ObjectDetector` use them: the image resized to
/// the model's input, each detection named by the labels and its box given in the image's pixels.
///
/// Which output is which, and the order of a box's coordinates, come from the model's metadata,
/// else from the `automl` companion file (`tflite_metadata.json`), else the layout of
/// `TFLite_Detection_PostProcess` (boxes as top, left, bottom, right).
///
/// ```swift
/// let detector = try ObjectDetector(model: verified, runtime: runtime, options: .init(scoreThreshold: 0.5))
/// for detection in try detector.detect(image) { print(detection.label, detection.box) }
/// ```
public final class ObjectDetector: @unchecked Sendable {
    // @unchecked: the runner runs one detection at a time (documented), as interpreters do.

    /// What a detection returns.
    public struct Options: Sendable {
        /// At most this many detections; `nil` for the model's (or `tflite_metadata.json`'s `maxDetections`).
        public var maximumResults: Int?
        /// Detections scoring below this are left out; `nil` takes the metadata's score threshold, else 0.
        public var scoreThreshold: Float?
        /// The label file's locale when the metadata has several; `nil` for its first.
        public var locale: String?

        /// Creates options.
        public init(maximumResults: Int? = nil, scoreThreshold: Float? = nil, locale: String? = nil) {
            self.maximumResults = maximumResults
            self.scoreThreshold = scoreThreshold
            self.locale = locale
        }
    }

    /// A rectangle in the image's pixels.
    public struct Box: Sendable, Hashable, CustomStringConvertible {
        public var x: Int
        public var y: Int
        public var width: Int
        public var height: Int
        public var description: String { "(\(x), \(y)) \(width)x\(height)" }
    }

    /// One detected object.
    public struct Detection: Sendable, Hashable {
        /// Where it is, in the source image's pixels (truncated origin, rounded size, as the Task Library gives them).
        public var box: Box
        /// The class index the model gave.
        public var classIndex: Int
        /// The label (`""` when the model has no label for it).
        public var label: String
        public var score: Float
    }

    /// Positions of the outputs.
    private struct Layout {
        var boxes = 0, classes = 1, scores = 2, count = 3
        /// Where left, top, right and bottom are in each box's four values.
        var coordinates = (left: 1, top: 0, right: 3, bottom: 2)
    }

    private let runner: any TensorRunner
    private let input: ImageTensorInput
    private let layout: Layout
    private let labels: [String]
    private let threshold: Float
    /// The score threshold the model's metadata gives, if it gives one.
    let metadataThreshold: Float?
    private let maximumResults: Int

    /// - Parameters:
    ///   - model: A verified model with an image input and the four outputs of `TFLite_Detection_PostProcess`.
    ///   - runtime: The interpreter that runs the model.
    ///   - options: What a detection returns.
    ///   - outcomes: Where to record the load, each run and its latency (`ModelDownloader.outcomes`);
    ///     a model the task cannot use is recorded as a load failure.
    /// - Throws: `DepotError`: `unsupported_model` for other inputs or outputs, `invalid_companion_file`
    ///   for `tflite_metadata.json` that contradicts the model; the runtime's failures.
    public convenience init(
        model: VerifiedModel, runtime: any TensorRunnerFactory, options: Options = Options(),
        outcomes: OutcomeRecorder? = nil
    ) throws {
        try self.init(checking: model, runtime: RecordedRuntime(base: runtime, outcomes: outcomes), options: options)
    }

    private init(checking model: VerifiedModel, runtime: RecordedRuntime, options: Options) throws {
        let settings: AutoMLSettings?
        let layout: Layout
        do {
            (input, layout, settings) = try Self.layout(of: model)
        } catch {
            runtime.refused(model, error)
            throw error
        }
        self.layout = layout
        let description = model.description
        let tensors = description.modelMetadata?.subgraphs.first
        let valueLabels = description.labelFiles.filter { $0.output == layout.classes }
        labels =
            (valueLabels.first { $0.locale == options.locale && options.locale != nil } ?? valueLabels.first)?.labels
            ?? model.labels(locale: options.locale)
        metadataThreshold = tensors?.outputs.dropFirst(layout.scores).first?.scoreThreshold
        threshold = options.scoreThreshold ?? metadataThreshold ?? 0
        maximumResults = options.maximumResults ?? settings?.maxDetections ?? Int.max
        runner = try runtime.makeRunner(for: model)
    }

    /// The model's image input, which output is which, and its AutoML settings; refuses a model
    /// that is not an SSD detector.
    private static func layout(of model: VerifiedModel) throws -> (ImageTensorInput, Layout, AutoMLSettings?) {
        let description = model.description
        let tensors = description.modelMetadata?.subgraphs.first
        let input = try ImageTensorInput(firstInputOf: description)
        let settings = try AutoMLSettings.of(model)
        if let shape = settings?.inputShape, shape != input.tensor.shape {
            throw DepotError(
                .invalidCompanionFile,
                "tflite_metadata.json gives input shape \(shape), but the model takes \(input.tensor.shape): they come from different exports."
            )
        }
        let outputs = description.outputs
        guard outputs.count == 4, outputs.allSatisfy({ $0.type == .float32 }) else {
            throw DepotError(
                .unsupportedModel,
                "The model has \(outputs.count) outputs (\(outputs.map { "\($0.type) \($0.shape)" }.joined(separator: ", "))); an SSD detector has four float32 ones: boxes, classes, scores and count (TFLite_Detection_PostProcess)."
            )
        }
        var layout = Layout()
        if let metadata = tensors?.outputs, metadata.count == 4 {
            for (position, tensor) in metadata.enumerated() {
                switch tensor.content?.properties {
                case .boundingBox(let index, _, _)?:
                    layout.boxes = position
                    if !index.isEmpty {
                        // Each of a box's 4 values is read at the position its index gives.
                        guard index.count == 4, Set(index) == [0, 1, 2, 3] else {
                            throw DepotError(
                                .invalidMetadata,
                                "The boxes output's metadata gives the coordinates at positions \(index.prefix(8)); a box has 4 values, so they are 0, 1, 2 and 3, each once."
                            )
                        }
                        layout.coordinates = (Int(index[0]), Int(index[1]), Int(index[2]), Int(index[3]))
                    }
                case _ where tensor.labelFiles.contains { $0.type == .tensorValueLabels }: layout.classes = position
                case _ where tensor.name == "score": layout.scores = position
                case _ where tensor.name == "number of detections": layout.count = position
                default: break
                }
            }
        } else if let names = settings?.outputTensorRepresentation, names.count == 4 {
            let position = { (name: String) in names.firstIndex(of: name) }
            guard let boxes = position("bounding_boxes"), let classes = position("class_labels"),
                let scores = position("class_confidences"), let count = position("num_of_boxes")
            else {
                throw DepotError(
                    .invalidCompanionFile,
                    "tflite_metadata.json names the outputs \(names); expected bounding_boxes, class_labels, class_confidences and num_of_boxes."
                )
            }
            layout = Layout(boxes: boxes, classes: classes, scores: scores, count: count)
        }
        guard Set([layout.boxes, layout.classes, layout.scores, layout.count]).count == 4, outputs[layout.boxes].shape.last == 4 else {
            throw DepotError(
                .unsupportedModel,
                "The model's outputs are not boxes, classes, scores and count: the box output has shape \(outputs[layout.boxes].shape).")
        }
        return (input, layout, settings)
    }

    /// Detects objects in an image, or in a region of it.
    /// - Parameters:
    ///   - image: RGB or RGBA pixels (alpha is ignored).
    ///   - region: The part of the image to search; the whole image when `nil`. Boxes are still
    ///     given in the whole image's pixels.
    /// - Returns: The detections scoring at least the threshold, in the model's order (best first),
    ///   at most `maximumResults`.
    /// - Throws: `DepotError` for a region outside the image, or the runtime's failures.
    public func detect(_ image: PixelBuffer, region: PixelRegion? = nil) throws -> [Detection] {
        try detect(image, region: region, minimumScore: threshold)
    }

    /// Detects as ``detect(_:region:)`` with another threshold.
    func detect(_ image: PixelBuffer, region: PixelRegion?, minimumScore: Float) throws -> [Detection] {
        let area = region ?? PixelRegion(x: 0, y: 0, width: image.width, height: image.height)
        let resized = try image.rgb().resized(width: input.width, height: input.height, region: region)
        let outputs = try runner.run([input.value(for: resized)]).map { $0.float32Values ?? [] }
        let boxes = outputs[layout.boxes], classes = outputs[layout.classes], scores = outputs[layout.scores]
        let count = min(Self.integer(outputs[layout.count].first ?? 0), scores.count, classes.count, boxes.count / 4)
        var detections: [Detection] = []
        for index in 0..<max(count, 0) where scores[index] >= minimumScore && detections.count < maximumResults {
            let values = boxes[(index * 4)..<(index * 4 + 4)].map { $0 }
            let (left, top) = (values[layout.coordinates.left], values[layout.coordinates.top])
            let (right, bottom) = (values[layout.coordinates.right], values[layout.coordinates.bottom])
            let width = Float(area.width), height = Float(area.height)
            let box = Box(
                x: area.x + Self.integer(left * width), y: area.y + Self.integer(top * height),
                width: Self.integer((abs(right - left) * width).rounded()), height: Self.integer((abs(bottom - top) * height).rounded()))
            let classIndex = classes[index].isNaN ? -1 : Self.integer(classes[index])
            detections.append(
                Detection(
                    box: box, classIndex: classIndex,
                    label: classIndex >= 0 && classIndex < labels.count ? labels[classIndex] : "", score: scores[index]))
        }
        return detections
    }

    /// A model's number as an integer, truncated: a model's outputs are not trusted to be finite
    /// or in range (NaN is 0; anything beyond ±2^30 is held there).
    static func integer(_ value: Float) -> Int {
        value.isNaN ? 0 : Int(min(max(value, -0x1p30), 0x1p30))
    }
}
