import TestSupport
import Testing

@testable import ModelDepotVision

/// ByteTrack's association on synthetic streams: ids that persist through motion, crossings,
/// misses and weak detections, and are never reused; the assignment is the cheapest there is.
@Suite struct ObjectTrackerTests {
    static func box(_ x: Double, _ y: Double, _ size: Double = 40) -> TrackerBox {
        TrackerBox(x: x, y: y, width: size, height: size)
    }

    static func observe(_ boxes: [TrackerBox], score: Float = 0.9) -> [ObjectTracker.Observation] {
        boxes.map { ObjectTracker.Observation(box: $0, score: score) }
    }

    @Test func assignmentsCostTheLeastThereIs() {
        var random = SeededGenerator(seed: 4)
        for _ in 0..<300 {
            let (rows, columns) = (Int.random(in: 1...4, using: &random), Int.random(in: 1...4, using: &random))
            let costs = (0..<rows).map { _ in (0..<columns).map { _ in Double.random(in: 0...1, using: &random) } }
            let limit = 0.6
            let pairs = LinearAssignment.pairs(costs, limit: limit)
            #expect(Set(pairs.map(\.row)).count == pairs.count && Set(pairs.map(\.column)).count == pairs.count)
            #expect(pairs.allSatisfy { costs[$0.row][$0.column] <= limit })
            // Every unpaired row and column costs half the limit, as lap.lapjv counts it.
            func total(_ pairs: [(row: Int, column: Int)]) -> Double {
                pairs.reduce(0) { $0 + costs[$1.row][$1.column] } + Double(rows + columns - 2 * pairs.count) * limit / 2
            }
            #expect(abs(total(pairs) - Self.cheapest(costs, limit: limit)) < 1e-9, "\(costs)")
        }
        #expect(LinearAssignment.pairs([], limit: 1).isEmpty)
    }

    /// The least total cost by trying every partial pairing.
    static func cheapest(_ costs: [[Double]], limit: Double, row: Int = 0, used: Set<Int> = []) -> Double {
        guard row < costs.count else { return Double(costs[0].count - used.count) * limit / 2 }
        var best = limit / 2 + cheapest(costs, limit: limit, row: row + 1, used: used)
        for column in costs[row].indices where !used.contains(column) && costs[row][column] <= limit {
            best = min(best, costs[row][column] + cheapest(costs, limit: limit, row: row + 1, used: used.union([column])))
        }
        return best
    }

    @Test func aBoxMovingSteadilyIsPredictedWhereItGoes() {
        var filter = BoxKalmanFilter(Self.box(0, 100))
        for step in 1...15 {
            filter.predict()
            filter.update(Self.box(Double(step) * 6, 100 + Double(step) * 2))
        }
        filter.predict()
        let predicted = filter.box
        #expect(abs(predicted.x - 96) < 1 && abs(predicted.y - 132) < 1 && abs(predicted.width - 40) < 0.5, "\(predicted)")
    }

    @Test func crossingObjectsKeepTheirIds() {
        let tracker = ObjectTracker()
        var ids: [Int: Set<Int>] = [:]
        for step in 0..<60 {
            // One goes right, the other left, through each other.
            let boxes = [Self.box(Double(step) * 5, 100), Self.box(300 - Double(step) * 5, 110)]
            for object in tracker.update(Self.observe(boxes)) { ids[object.observation, default: []].insert(object.id) }
        }
        #expect(ids == [0: [1], 1: [2]], "\(ids)")
    }

    @Test func aTrackSurvivesMissesUpToTheLimitAndIdsAreNeverReused() {
        let tracker = ObjectTracker()
        func seen(at step: Int) -> [Int] { tracker.update(Self.observe([Self.box(Double(step) * 3, 50)])).map(\.id) }
        for step in 0..<10 { #expect(seen(at: step) == [1]) }
        for _ in 10..<20 { #expect(tracker.update([]).isEmpty) }
        #expect(seen(at: 20) == [1], "back on its path after 10 missed frames")
        for _ in 21..<52 { _ = tracker.update([]) }
        #expect(seen(at: 52).isEmpty, "31 frames missed: a new track, reported from its second frame")
        #expect(seen(at: 53) == [2])
    }

    @Test func weakDetectionsKeepATrackButNeverStartOne() {
        let tracker = ObjectTracker()
        #expect(tracker.update(Self.observe([Self.box(0, 0)])).map(\.id) == [1])
        for step in 1...5 {
            let weak = tracker.update(Self.observe([Self.box(Double(step) * 2, 0), Self.box(400, 400)], score: 0.2))
            #expect(weak.map(\.id) == [1], "the weak detection on its path keeps track 1; the other starts nothing")
        }
        #expect(tracker.update(Self.observe([Self.box(12, 0)])).map(\.id) == [1])
        #expect(
            tracker.update(Self.observe([Self.box(14, 0), Self.box(200, 200, 30)])).map(\.id) == [1],
            "a new object waits for its second frame")
        #expect(tracker.update(Self.observe([Self.box(16, 0), Self.box(201, 200, 30)])).map(\.id) == [1, 2])
        #expect(tracker.update(Self.observe([Self.box(18, 0)], score: 0.05)).isEmpty, "below the low score, nothing")
    }
}
