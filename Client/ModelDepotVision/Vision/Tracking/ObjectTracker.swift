/// Gives the objects a detector finds in a stream of frames ids that stay the same while they
/// stay in view: ByteTrack's method (Zhang et al., 2022). Each track's box moves with a constant
/// velocity (`BoxKalmanFilter`); each frame, confident detections are paired with the tracks'
/// predicted boxes by IoU (least total cost), then the weak ones keep the tracks they overlap
/// alive (an object partly hidden scores low before it vanishes); an unpaired confident detection
/// starts a track, reported once a second frame confirms it (at once in the first frame); a
/// track missed for more than `maximumMissedFrames` ends. Ids count up from 1 and are never
/// reused. One tracker per stream; not for concurrent use.
public final class ObjectTracker {
    /// ByteTrack's thresholds as `supervision`'s `ByteTrack` sets them by default.
    public struct Options: Sendable, Hashable {
        /// Detections at or above this are paired first.
        public var highScore: Float = 0.25
        /// Detections from this up to `highScore` only keep tracks alive; below, ignored.
        public var lowScore: Float = 0.1
        /// A detection starts a track at or above this.
        public var newTrackScore: Float = 0.35
        /// The least IoU of a confident detection with a track's predicted box.
        public var firstMatchIoU = 0.2
        /// The least IoU of a weak detection with a track's predicted box.
        public var secondMatchIoU = 0.5
        /// The least IoU that confirms a new track in its second frame.
        public var confirmationIoU = 0.3
        /// Frames a track survives without a detection (an object hidden or missed).
        public var maximumMissedFrames = 30

        public init() {}
    }

    /// A detection of one frame.
    public struct Observation: Sendable, Hashable {
        public var box: TrackerBox
        public var score: Float

        public init(box: TrackerBox, score: Float) {
            self.box = box
            self.score = score
        }
    }

    /// A tracked object in the frame just given.
    public struct TrackedObject: Sendable, Hashable {
        public let id: Int
        /// The detection's box.
        public let box: TrackerBox
        public let score: Float
        /// The index of its detection among the frame's observations.
        public let observation: Int
        /// Frames since the track started (1 in its first).
        public let age: Int
    }

    private struct Track {
        let id: Int
        var filter: BoxKalmanFilter
        var missed = 0
        var confirmed: Bool
        let startFrame: Int
    }

    public let options: Options
    private var tracks: [Track] = []
    private var nextID = 1
    /// Frames given so far.
    public private(set) var frame = 0

    public init(options: Options = Options()) {
        self.options = options
    }

    /// Whether the track `id` is still followed: confirmed, and missed for at most
    /// `maximumMissedFrames` frames so far.
    public func isTracking(_ id: Int) -> Bool {
        tracks.contains { $0.id == id && $0.confirmed }
    }

    /// Tracks one frame's detections; returns the confirmed tracks seen in it, by id.
    public func update(_ observations: [Observation]) -> [TrackedObject] {
        frame += 1
        for index in tracks.indices { tracks[index].filter.predict() }
        let high = observations.indices.filter { observations[$0].score >= options.highScore }
        let low = observations.indices.filter { observations[$0].score >= options.lowScore && observations[$0].score < options.highScore }
        var matched: [(track: Int, observation: Int)] = []

        // Confident detections with every confirmed track, followed or lost.
        let confirmed = tracks.indices.filter { tracks[$0].confirmed }
        let first = pair(confirmed, high, observations, minimumIoU: options.firstMatchIoU)
        matched += first
        var unpairedHigh = high.filter { index in !first.contains { $0.observation == index } }
        // Weak detections with the tracks followed until the last frame and not paired yet.
        let followed = confirmed.filter { track in tracks[track].missed == 0 && !first.contains { $0.track == track } }
        matched += pair(followed, low, observations, minimumIoU: options.secondMatchIoU)
        // New tracks of the last frame, confirmed by a confident detection now.
        let unconfirmed = tracks.indices.filter { !tracks[$0].confirmed }
        let confirmations = pair(unconfirmed, unpairedHigh, observations, minimumIoU: options.confirmationIoU)
        matched += confirmations
        unpairedHigh.removeAll { index in confirmations.contains { $0.observation == index } }

        var reported: [TrackedObject] = []
        var pairedTracks = Set<Int>()
        for (track, observation) in matched {
            pairedTracks.insert(track)
            tracks[track].filter.update(observations[observation].box)
            tracks[track].missed = 0
            tracks[track].confirmed = true
            reported.append(
                TrackedObject(
                    id: tracks[track].id, box: observations[observation].box, score: observations[observation].score,
                    observation: observation, age: frame - tracks[track].startFrame + 1))
        }
        // Tracks without a detection: an unconfirmed one ends, a confirmed one waits.
        var kept: [Track] = []
        for (index, var track) in tracks.enumerated() {
            if !pairedTracks.contains(index) {
                guard track.confirmed else { continue }
                track.missed += 1
                guard track.missed <= options.maximumMissedFrames else { continue }
            }
            kept.append(track)
        }
        tracks = kept
        for observation in unpairedHigh where observations[observation].score >= options.newTrackScore {
            let track = Track(id: nextID, filter: BoxKalmanFilter(observations[observation].box), confirmed: frame == 1, startFrame: frame)
            nextID += 1
            tracks.append(track)
            if track.confirmed {
                reported.append(
                    TrackedObject(
                        id: track.id, box: observations[observation].box, score: observations[observation].score,
                        observation: observation, age: 1))
            }
        }
        return reported.sorted { $0.id < $1.id }
    }

    /// Pairs tracks with observations by the IoU of the track's predicted box, least total cost.
    private func pair(
        _ trackIndices: [Int], _ observationIndices: [Int], _ observations: [Observation],
        minimumIoU: Double
    ) -> [(track: Int, observation: Int)] {
        guard !trackIndices.isEmpty, !observationIndices.isEmpty else { return [] }
        let costs = trackIndices.map { track in
            let predicted = tracks[track].filter.box
            return observationIndices.map { 1 - predicted.intersectionOverUnion(observations[$0].box) }
        }
        return LinearAssignment.pairs(costs, limit: 1 - minimumIoU).map { (trackIndices[$0.row], observationIndices[$0.column]) }
    }
}
