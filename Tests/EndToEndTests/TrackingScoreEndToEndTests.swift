import Foundation
import ModelDepotLiteRT
import TestSupport
import Testing

/// `ObjectTracker` scored against ByteTrack on the same detections: 12 seeded synthetic
/// sequences with ground truth (scripts/tracking/sequences.py: objects apart, crossing, leaving
/// and coming back; jitter, misses, half-hidden weak detections, false positives), ByteTrack as
/// supervision 0.26.1 runs it, both scored by motmetrics 1.4.0 (IoU 0.5), in
/// .build/tracking-reference (scripts/bootstrap).
@Suite struct TrackingScoreEndToEndTests {
    struct Frame: Decodable {
        let frame: Int
        let detections: [[Double]]
    }

    static let python = Binaries.repository.appendingPathComponent(".build/tracking-reference/bin/python")
    static let script = Binaries.repository.appendingPathComponent("scripts/tracking/sequences.py").path

    static func sequences(_ command: String, _ directory: String) async throws -> String {
        let output = try await Program.run(python, [script, command, directory])
        guard output.status == 0 else { throw E2EFailure("sequences.py \(command) failed: \(output.error)") }
        return output.text
    }

    @Test func idf1AndMOTAAreAtLeastByteTracksAndObjectsApartNeverSwitchIDs() async throws {
        let scratch = try Scratch()
        let directory = scratch.url.path
        _ = try await Self.sequences("make", directory)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(names.count == 12)
        for name in names {
            let tracker = ObjectTracker()
            var lines: [String] = []
            let detections = try String(contentsOfFile: scratch.path("\(name)/detections.jsonl"), encoding: .utf8)
            for line in detections.split(separator: "\n") {
                let frame = try JSONDecoder().decode(Frame.self, from: Data(line.utf8))
                let tracked = tracker.update(
                    frame.detections.map {
                        ObjectTracker.Observation(box: TrackerBox(x: $0[0], y: $0[1], width: $0[2], height: $0[3]), score: Float($0[4]))
                    })
                let tracks = tracked.map { "[\($0.id), \($0.box.x), \($0.box.y), \($0.box.width), \($0.box.height)]" }
                lines.append("{\"frame\": \(frame.frame), \"tracks\": [\(tracks.joined(separator: ", "))]}")
            }
            #expect(lines.count == 300, "\(name)")
            try (lines.joined(separator: "\n") + "\n").write(toFile: scratch.path("\(name)/ours.jsonl"), atomically: true, encoding: .utf8)
        }
        let line = try await Self.sequences("score", directory).split(separator: "\n").last.map(String.init) ?? ""
        // "<sequence> <tracker>": [MOTA, IDF1, id switches]
        let scores = try JSONDecoder().decode([String: [Double]].self, from: Data(line.utf8))
        #expect(scores.count == names.count * 2)
        func mean(_ tracker: String, _ index: Int) -> Double {
            var total = 0.0
            for name in names { total += scores["\(name) \(tracker)"]?[index] ?? -1 }
            return total / Double(names.count)
        }
        #expect(mean("ours", 0) >= mean("bytetrack", 0), "MOTA \(mean("ours", 0)) vs ByteTrack's \(mean("bytetrack", 0))")
        #expect(mean("ours", 1) >= mean("bytetrack", 1), "IDF1 \(mean("ours", 1)) vs ByteTrack's \(mean("bytetrack", 1))")
        #expect(mean("ours", 0) > 0.9 && mean("ours", 1) > 0.85, "the sequences are tracked, not only as badly as ByteTrack")
        for name in names where name.hasPrefix("apart") {
            #expect(scores["\(name) ours"]?[2] == 0, "\(name): objects that never overlap switch no ids")
        }
    }
}
