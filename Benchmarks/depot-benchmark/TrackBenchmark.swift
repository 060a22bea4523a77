import Foundation
import ModelDepot
import ModelDepotLiteRT

/// The tracker on a stream of detections, for scripts/bench/tracking: reads one JSON line per
/// frame, `{"frame": n, "detections": [[x, y, width, height, score], ...]}`, from standard input,
/// writes `{"frame": n, "tracks": [[id, x, y, width, height], ...]}` per frame, then a last line
/// `{"frames": n, "microsecondsPerFrame": m}` (the tracker's own time, median).
enum TrackBenchmark {
    struct Frame: Decodable {
        let frame: Int
        let detections: [[Double]]
    }

    static func run() throws {
        let tracker = ObjectTracker()
        var times: [Double] = []
        let decoder = JSONDecoder()
        while let line = readLine() {
            let frame = try decoder.decode(Frame.self, from: Data(line.utf8))
            let observations = frame.detections.map {
                ObjectTracker.Observation(box: TrackerBox(x: $0[0], y: $0[1], width: $0[2], height: $0[3]), score: Float($0[4]))
            }
            let start = ContinuousClock.now
            let tracked = tracker.update(observations)
            times.append((ContinuousClock.now - start).seconds * 1e6)
            let tracks = tracked.map { "[\($0.id), \($0.box.x), \($0.box.y), \($0.box.width), \($0.box.height)]" }.joined(separator: ", ")
            print("{\"frame\": \(frame.frame), \"tracks\": [\(tracks)]}")
        }
        times.sort()
        print("{\"frames\": \(times.count), \"microsecondsPerFrame\": \(times.isEmpty ? 0 : times[times.count / 2])}")
    }
}
