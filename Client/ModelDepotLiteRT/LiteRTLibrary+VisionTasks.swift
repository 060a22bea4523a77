import ModelDepot
import ModelDepotVision

extension ImageClassifier {
    /// A classifier run by LiteRT: `ImageClassifier/init(model:runtime:options:outcomes:)` with `library`.
    public convenience init(model: VerifiedModel, library: LiteRTLibrary, options: Options = Options(), outcomes: OutcomeRecorder? = nil)
        throws
    {
        try self.init(model: model, runtime: library, options: options, outcomes: outcomes)
    }
}

extension ObjectDetector {
    /// A detector run by LiteRT: `ObjectDetector/init(model:runtime:options:outcomes:)` with `library`.
    public convenience init(model: VerifiedModel, library: LiteRTLibrary, options: Options = Options(), outcomes: OutcomeRecorder? = nil)
        throws
    {
        try self.init(model: model, runtime: library, options: options, outcomes: outcomes)
    }
}

extension CustomObjectDetector {
    /// Detect, track and classify with LiteRT:
    /// `CustomObjectDetector/init(detector:classifier:runtime:options:outcomes:)` with `library`.
    public convenience init(
        detector: VerifiedModel, classifier: VerifiedModel? = nil, library: LiteRTLibrary,
        options: Options = Options(), outcomes: OutcomeRecorder? = nil
    ) throws {
        try self.init(detector: detector, classifier: classifier, runtime: library, options: options, outcomes: outcomes)
    }
}
