import ModelDepot
import ModelDepotShared

/// ML Kit's "detect, track and classify objects with a custom classification model": a
/// detection model from the depot proposes objects (its classes ignored), stream mode tracks
/// them across frames (``ObjectTracker``) and gives each an id, and the app's classifier labels
/// each object's box. Both models are `VerifiedModel`s, downloaded or bundled.
///
/// ```swift
/// var options = CustomObjectDetector.Options(shouldEnableMultipleObjects: true, shouldEnableClassification: true)
/// let detector = try CustomObjectDetector(detector: proposer, classifier: birds, runtime: runtime, options: options)
/// for object in try detector.results(in: frame) { print(object.trackingID ?? 0, object.frame, object.labels.first?.text ?? "") }
/// ```
///
/// One detector per stream; one call at a time (as one ML Kit detector on one queue).
public final class CustomObjectDetector: @unchecked Sendable {
    // @unchecked: one frame at a time (documented), as the runners and the tracker need.

    /// The most objects a frame's results hold with `shouldEnableMultipleObjects` (ML Kit's five).
    public static let maximumObjects = 5
    /// Two proposals overlapping more than this are one object named twice (by two classes of
    /// the detector); the weaker is left out.
    static let duplicateIoU = 0.7

    public let options: Options
    private let detector: ObjectDetector
    private let classifier: ImageClassifier?
    private let detectionThreshold: Float
    private let tracker: ObjectTracker?
    /// Stream mode: each tracked object's labels and the frame the object was last reported in.
    private var labels: [Int: (labels: [Label], seen: Int)] = [:]
    /// Stream mode without multiple objects: the object chosen, kept while it is tracked (in a
    /// frame that misses it, nothing is reported).
    private var prominentID: Int?

    /// - Parameters:
    ///   - detector: A verified model with `TFLite_Detection_PostProcess` outputs (see ``ObjectDetector``).
    ///   - classifier: A verified image classifier (see ``ImageClassifier``); needed with `shouldEnableClassification`.
    ///   - runtime: The interpreter that runs both models.
    ///   - options: ML Kit's options, and ours.
    ///   - outcomes: Where both models' loads, runs and latencies are recorded.
    /// - Throws: `DepotError`: `invalid_options`; `unsupported_model` for a model the task cannot
    ///   use; the runtime's failures.
    public init(
        detector: VerifiedModel, classifier: VerifiedModel? = nil, runtime: any TensorRunnerFactory,
        options: Options = Options(), outcomes: OutcomeRecorder? = nil
    ) throws {
        try options.validate(hasClassifier: classifier != nil)
        self.options = options
        self.detector = try ObjectDetector(model: detector, runtime: runtime, options: .init(locale: options.locale), outcomes: outcomes)
        if options.shouldEnableClassification, let classifier {
            let labelling = ImageClassifier.Options(
                maximumResults: options.maxPerObjectLabelCount,
                scoreThreshold: options.classificationConfidenceThreshold, locale: options.locale)
            self.classifier = try ImageClassifier(model: classifier, runtime: runtime, options: labelling, outcomes: outcomes)
        } else {
            self.classifier = nil
        }
        detectionThreshold = options.detectionScoreThreshold ?? self.detector.metadataThreshold ?? 0.35
        if options.detectorMode == .stream {
            var tracking = options.tracking
            tracking.newTrackScore = detectionThreshold
            tracking.highScore = min(tracking.highScore, detectionThreshold)
            tracker = ObjectTracker(options: tracking)
        } else {
            tracker = nil
        }
    }

    /// The objects in a camera frame, stood upright first (see ``CameraFrame/upright()``);
    /// frames are in the upright image's pixels.
    public func results(in frame: CameraFrame) throws -> [DetectedObject] {
        try results(in: frame.upright())
    }

    /// The objects in an image (or the next frame of the stream).
    /// - Returns: Stream mode: the tracked objects seen in this frame, by tracking id (an object
    ///   new in a later frame is reported from its second frame). Single-image mode: by
    ///   detection score. At most five, or the most prominent one.
    /// - Throws: The runtime's failures.
    public func results(in image: PixelBuffer) throws -> [DetectedObject] {
        let rgb = image.rgb()
        guard let tracker else {
            let proposals = try propose(in: rgb, minimumScore: detectionThreshold)
            let chosen =
                options.shouldEnableMultipleObjects
                ? Array(proposals.prefix(Self.maximumObjects))
                : Self.mostProminent(proposals.indices.map { ($0, proposals[$0]) }).map { [proposals[$0]] } ?? []
            return try chosen.map { DetectedObject(frame: $0.region, trackingID: nil, labels: try classify(rgb, $0.region)) }
        }
        let proposals = try propose(in: rgb, minimumScore: min(options.tracking.lowScore, detectionThreshold))
        let tracked = tracker.update(proposals.map { ObjectTracker.Observation(box: $0.trackerBox, score: $0.score) })
        let chosen: [ObjectTracker.TrackedObject]
        if options.shouldEnableMultipleObjects {
            chosen = tracked.sorted { $0.score != $1.score ? $0.score > $1.score : $0.id < $1.id }.prefix(Self.maximumObjects).sorted {
                $0.id < $1.id
            }
        } else if let prominentID, tracker.isTracking(prominentID) {
            chosen = tracked.filter { $0.id == prominentID }
        } else {
            chosen = Self.mostProminent(tracked.map { ($0, proposals[$0.observation]) }).map { [$0] } ?? []
        }
        prominentID = chosen.first?.id ?? prominentID
        let frame = tracker.frame
        let objects = try chosen.map { object in
            let region = proposals[object.observation].region
            return DetectedObject(
                frame: region, trackingID: object.id, labels: try labels(of: object.id, in: rgb, region: region, frame: frame))
        }
        labels = labels.filter { frame - $0.value.seen <= options.tracking.maximumMissedFrames }
        return objects
    }

    /// A tracked object's labels: computed when it first appears and on every
    /// `classificationInterval`-th frame counted from its id, else those computed last.
    private func labels(of id: Int, in image: PixelBuffer, region: PixelRegion, frame: Int) throws -> [Label] {
        if let known = labels[id], (frame + id) % options.classificationInterval != 0 {
            labels[id]?.seen = frame
            return known.labels
        }
        let fresh = try classify(image, region)
        labels[id] = (fresh, frame)
        return fresh
    }

    private func classify(_ image: PixelBuffer, _ region: PixelRegion) throws -> [Label] {
        guard let classifier else { return [] }
        return try classifier.classify(image, region: region).map { Label(index: $0.index, text: $0.label, confidence: $0.score) }
    }

    /// A detection as the pipeline uses it: its box cut to the image, and its score.
    struct Proposal {
        var region: PixelRegion
        var score: Float

        var trackerBox: TrackerBox {
            TrackerBox(x: Double(region.x), y: Double(region.y), width: Double(region.width), height: Double(region.height))
        }
    }

    /// The detector's boxes scoring at least `minimumScore`, cut to the image (those wholly
    /// outside dropped), best first, without duplicates of one object.
    private func propose(in image: PixelBuffer, minimumScore: Float) throws -> [Proposal] {
        let detections = try detector.detect(image, region: nil, minimumScore: minimumScore)
        return Self.proposals(detections.map { ($0.box, $0.score) }, width: image.width, height: image.height)
    }

    static func proposals(_ detections: [(box: ObjectDetector.Box, score: Float)], width: Int, height: Int) -> [Proposal] {
        var kept: [Proposal] = []
        for (box, score) in detections.sorted(by: { $0.score > $1.score }) {
            let left = max(0, box.x), top = max(0, box.y)
            let right = min(width, box.x.addingReportingOverflow(box.width).partialValue)
            let bottom = min(height, box.y.addingReportingOverflow(box.height).partialValue)
            guard right > left, bottom > top else { continue }
            let proposal = Proposal(region: PixelRegion(x: left, y: top, width: right - left, height: bottom - top), score: score)
            guard !kept.contains(where: { $0.trackerBox.intersectionOverUnion(proposal.trackerBox) > duplicateIoU }) else { continue }
            kept.append(proposal)
        }
        return kept
    }

    /// The most prominent object: the largest box, then the higher score, then the first given.
    static func mostProminent<Item>(_ candidates: [(item: Item, proposal: Proposal)]) -> Item? {
        var best: (item: Item, proposal: Proposal)?
        for candidate in candidates {
            guard let current = best else {
                best = candidate
                continue
            }
            let area = candidate.proposal.region.width * candidate.proposal.region.height
            let bestArea = current.proposal.region.width * current.proposal.region.height
            if area > bestArea || (area == bestArea && candidate.proposal.score > current.proposal.score) { best = candidate }
        }
        return best?.item
    }
}
