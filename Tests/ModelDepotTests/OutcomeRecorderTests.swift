import Foundation
import ModelDepotShared
import Synchronization
import Testing

@testable import ModelDepot

/// The SDK's outcome queue on a real folder: events add up per metric, version, arm and hour;
/// past ``OutcomeRecorder/maximumEntries`` the oldest go and are counted as dropped; a batch taken
/// and not acknowledged is sent again with the same id.
@Suite struct OutcomeRecorderTests {
    let manifest = ModelManifest(
        model: try! ModelName("flowers"), version: 3, sha256: String(repeating: "a", count: 64), size: 1,
        downloadURL: "/x", tensors: .init(inputs: [], outputs: []), arm: "rule:r-1", manifestVersion: 1,
        issued: Date(timeIntervalSince1970: 0), expires: Date(timeIntervalSince1970: 1))

    func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("outcomes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func theOldestEntriesAreDroppedAndCountedAndBatchesHoldAThousand() throws {
        let directory = try folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let now = Mutex(1_800_000_000.0)
        let clock: @Sendable () -> Date = { Date(timeIntervalSince1970: now.withLock { $0 }) }
        let recorder = OutcomeRecorder(directory: directory, enabled: true, clock: clock, capacity: 50)
        for latency in [10.0, 20, 30] { recorder.record(.inferenceLatency, value: latency, manifest: manifest) }
        // One entry per hour from here on: one more than the queue holds.
        for _ in 0..<50 {
            now.withLock { $0 += 3_600 }
            recorder.record(.inferences, manifest: manifest)
        }
        #expect(recorder.pendingEvents == 50, "the oldest entry (3 latencies) went")
        let dropped = recorder.takeBatches()
        #expect(dropped.map(\.dropped) == [3] && dropped.first?.events.count == 50, "the server learns how many events were lost")
        let first = try #require(dropped.first?.events.first)
        #expect(first.metric == "inferences" && first.version == 3 && first.arm == "rule:r-1" && first.count == 1)
        recorder.finished(dropped[0].id)

        // 2,500 entries of one hour (one per version) make batches of at most a thousand.
        let large = OutcomeRecorder(directory: directory, enabled: true, clock: clock)
        for version in 1...2_500 {
            var other = manifest
            other.version = version
            large.record(.installed, manifest: other)
        }
        let batches = large.takeBatches()
        #expect(batches.map(\.events.count) == [1_000, 1_000, 500])
        #expect(batches.allSatisfy { $0.model == manifest.model && $0.dropped == 0 })

        // Not acknowledged: a recorder opened on the same folder sends the same batches, same ids.
        large.finished(batches[0].id)
        let again = OutcomeRecorder(directory: directory, enabled: true, clock: clock).takeBatches()
        #expect(again.map(\.id) == batches.dropFirst().map(\.id))
    }

    @Test func oneHoursEventsBecomeOneEntryWithTheirCountAndTotal() throws {
        let directory = try folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recorder = OutcomeRecorder(directory: directory, enabled: true, clock: { Date(timeIntervalSince1970: 1_800_000_000) })
        for latency in [10.0, 20, 30] { recorder.record(.inferenceLatency, value: latency, manifest: manifest) }
        recorder.record(.loadFailed, code: .unsupportedModel, manifest: manifest)
        let events = try #require(recorder.takeBatches().first).events.sorted { $0.metric < $1.metric }
        #expect(events.map(\.metric) == ["inference_latency_ms", "load_failed"])
        #expect(events[0].count == 3 && events[0].value == 60 && events[0].at == 1_800_000_000)
        #expect(events[1].count == 1 && events[1].value == 1 && events[1].code == "unsupported_model")
    }

    @Test func aBatchCarriesTheExposureTokenOfEachVersionAndArmOfItsEvents() throws {
        let directory = try folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recorder = OutcomeRecorder(directory: directory, enabled: true, clock: { Date(timeIntervalSince1970: 1_800_000_000) })
        var other = manifest
        other.version = 4
        recorder.expose("20833.first", manifest: manifest)
        recorder.expose("20833.newest", manifest: manifest)
        recorder.record(.installed, manifest: manifest)
        recorder.record(.installed, manifest: other)
        var otherArm = manifest
        otherArm.arm = "default"
        recorder.record(.loadSucceeded, manifest: otherArm)
        let batch = try #require(recorder.takeBatches().first)
        recorder.finished(batch.id)
        #expect(batch.events.count == 3)
        // The newest token of the version; none for a version the server never gave, nor for another arm.
        #expect(batch.exposures == [.init(version: 3, arm: "rule:r-1", token: "20833.newest")])

        // Many versions of a model keep at most 8 tokens, and always the newest.
        for version in 10..<30 {
            var shown = manifest
            shown.version = version
            recorder.expose("20833.v\(version)", manifest: shown)
        }
        recorder.record(
            .installed,
            manifest: {
                var last = manifest
                last.version = 29
                return last
            }())
        #expect(try #require(recorder.takeBatches().first).exposures == [.init(version: 29, arm: "rule:r-1", token: "20833.v29")])
    }

    @Test func aQueueSavedBeforeTokensIsStillRead() throws {
        let directory = try folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        var state = OutcomeRecorder.State()
        state.batches = [.init(id: "b-1", model: manifest.model, events: [], dropped: 2)]
        var saved = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(state)) as? [String: Any])
        #expect(saved.removeValue(forKey: "exposures") != nil)
        try JSONSerialization.data(withJSONObject: saved).write(to: directory.appendingPathComponent("outcomes.json"))
        let recorder = OutcomeRecorder(directory: directory, enabled: true, clock: { Date(timeIntervalSince1970: 1_800_000_000) })
        #expect(recorder.takeBatches().map(\.id) == ["b-1"], "the batch waiting to be sent again is kept")
    }

    /// The receipt of a batch is not signed: a count of applied events outside the batch's
    /// (`Int.max` twice overflowed the sum and trapped the app) counts none.
    @Test func aReceiptCountsAtMostTheBatchsEvents() {
        let receipt = { (accepted: String) in Data(#"{"batch":"b-1","accepted":\#(accepted),"duplicate":false}"#.utf8) }
        #expect(ModelDownloader.applied(receipt: receipt("3"), events: 5) == 3)
        #expect(ModelDownloader.applied(receipt: receipt("5"), events: 5) == 5)
        for hostile in ["6", "-1", "9223372036854775807", "-9223372036854775808"] {
            #expect(ModelDownloader.applied(receipt: receipt(hostile), events: 5) == 0, "\(hostile)")
        }
        #expect(ModelDownloader.applied(receipt: Data("not json".utf8), events: 5) == 0)
    }

    /// A queue file whose counts no queue reaches (they overflowed when added up, and trapped the
    /// app at launch) is not read: the recorder starts empty and records.
    @Test func aQueueFileWithCountsBeyondAnyQueueIsNotRead() throws {
        let directory = try folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock: @Sendable () -> Date = { Date(timeIntervalSince1970: 1_800_000_000) }
        let recorder = OutcomeRecorder(directory: directory, enabled: true, clock: clock)
        recorder.record(.inferences, manifest: manifest)
        recorder.save()
        #expect(OutcomeRecorder(directory: directory, enabled: true, clock: clock).pendingEvents == 1, "a sound file is read")
        let file = directory.appendingPathComponent("outcomes.json")
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text.contains(#""count":1"#))
        try text.replacingOccurrences(of: #""count":1"#, with: #""count":9223372036854775807"#).write(
            to: file, atomically: true, encoding: .utf8)
        let reopened = OutcomeRecorder(directory: directory, enabled: true, clock: clock)
        #expect(reopened.pendingEvents == 0)
        reopened.record(.inferences, manifest: manifest)
        #expect(reopened.pendingEvents == 1)
    }
}
