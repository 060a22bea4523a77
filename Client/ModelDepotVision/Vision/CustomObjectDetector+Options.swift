import ModelDepotShared

extension CustomObjectDetector {
    /// ML Kit's `CustomObjectDetectorOptions`, named as ML Kit names them, with ours after.
    public struct Options: Sendable {
        /// Whether frames come from a stream (tracking ids, labels carried between frames) or
        /// are unrelated images.
        public enum DetectorMode: Sendable, Hashable {
            /// Frames of one video stream: objects get tracking ids; labels are refreshed every
            /// `classificationInterval` frames per object.
            case stream
            /// Each image on its own: no tracking ids; every object classified every time.
            case singleImage
        }

        /// `.stream` (ML Kit's default) or `.singleImage`.
        public var detectorMode = DetectorMode.stream
        /// Up to five objects (``CustomObjectDetector/maximumObjects``) when `true`; only the most
        /// prominent one when `false` (ML Kit's default).
        public var shouldEnableMultipleObjects = false
        /// Labels each object with the classifier model (needs one). `false` by default, as ML Kit.
        public var shouldEnableClassification = false
        /// Labels below this confidence are left out; `nil` takes the classifier's metadata
        /// threshold, else 0.
        public var classificationConfidenceThreshold: Float?
        /// At most this many labels per object (ML Kit's default, 10).
        public var maxPerObjectLabelCount = 10
        /// Ours: an object is reported from a detection scoring at least this (in stream mode it
        /// starts a track; weaker ones keep tracks alive as `tracking` says). `nil` takes the
        /// detector's metadata threshold, else 0.35 (ByteTrack's score to start a track).
        public var detectionScoreThreshold: Float?
        /// Ours, stream mode: an object's labels are computed when it first appears and then
        /// every this many frames (staggered by tracking id), carried over in between.
        public var classificationInterval = 5
        /// Ours, stream mode: the tracker's thresholds (its score to start a track is replaced by
        /// the detection score threshold, and its score to pair first lowered to it when it is lower).
        public var tracking = ObjectTracker.Options()
        /// The label files' locale when the models have several; `nil` for their first.
        public var locale: String?

        /// Creates options.
        public init(
            detectorMode: DetectorMode = .stream, shouldEnableMultipleObjects: Bool = false,
            shouldEnableClassification: Bool = false, classificationConfidenceThreshold: Float? = nil,
            maxPerObjectLabelCount: Int = 10
        ) {
            self.detectorMode = detectorMode
            self.shouldEnableMultipleObjects = shouldEnableMultipleObjects
            self.shouldEnableClassification = shouldEnableClassification
            self.classificationConfidenceThreshold = classificationConfidenceThreshold
            self.maxPerObjectLabelCount = maxPerObjectLabelCount
        }

        /// - Throws: `DepotError` (`invalid_options`) naming the option and its value.
        func validate(hasClassifier: Bool) throws(DepotError) {
            for (name, value) in [
                ("classificationConfidenceThreshold", classificationConfidenceThreshold),
                ("detectionScoreThreshold", detectionScoreThreshold),
            ] {
                if let value, !(0...1).contains(value) {
                    throw DepotError(.invalidOptions, "\(name) is \(value); a confidence lies between 0 and 1.")
                }
            }
            let scores = [
                ("tracking.highScore", tracking.highScore), ("tracking.lowScore", tracking.lowScore),
                ("tracking.newTrackScore", tracking.newTrackScore),
            ]
            let overlaps = [
                ("tracking.firstMatchIoU", tracking.firstMatchIoU), ("tracking.secondMatchIoU", tracking.secondMatchIoU),
                ("tracking.confirmationIoU", tracking.confirmationIoU),
            ]
            for (name, value) in scores.map({ ($0.0, Double($0.1)) }) + overlaps where !(0...1).contains(value) {
                throw DepotError(.invalidOptions, "\(name) is \(value); it lies between 0 and 1.")
            }
            guard tracking.maximumMissedFrames >= 0 else {
                throw DepotError(.invalidOptions, "tracking.maximumMissedFrames is \(tracking.maximumMissedFrames); give 0 or more frames.")
            }
            guard maxPerObjectLabelCount >= 1 else {
                throw DepotError(
                    .invalidOptions, "maxPerObjectLabelCount is \(maxPerObjectLabelCount); give 1 or more (ML Kit's default is 10).")
            }
            guard classificationInterval >= 1 else {
                throw DepotError(.invalidOptions, "classificationInterval is \(classificationInterval); give 1 (every frame) or more.")
            }
            guard !shouldEnableClassification || hasClassifier else {
                throw DepotError(
                    .invalidOptions,
                    "shouldEnableClassification is true but no classifier model was given: pass one as `classifier:`, or leave classification off."
                )
            }
        }
    }

    /// A label of an object, as ML Kit's `ObjectLabel`.
    public struct Label: Sendable, Hashable {
        /// The class's position in the classifier's output.
        public var index: Int
        /// The classifier's label for it (`""` when it has none).
        public var text: String
        public var confidence: Float
    }

    /// An object in a frame, as ML Kit's `Object`.
    public struct DetectedObject: Sendable, Hashable {
        /// Where it is, in the upright image's pixels (inside the image).
        public var frame: PixelRegion
        /// The same while the object stays in view (stream mode); `nil` in single-image mode.
        public var trackingID: Int?
        /// Best first; empty without classification (and when no label reaches the threshold).
        public var labels: [Label]
    }
}
