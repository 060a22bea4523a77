import Foundation
import ModelDepotLiteRT
import ModelDepotRollouts
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepot

/// Outcomes from real `ModelDownloader` devices running their model in LiteRT, sent to a real
/// `depot serve`, read back with `depot experiment show`.
@Suite struct OutcomesEndToEndTests {
    @Test func devicesOutcomesReachTheResultsPerVersionOfTheirArm() async throws {
        let published = try await PublishedModel(["float_classifier", "float_classifier_labels"])
        let environment = published.server.environment
        try await Command.depot(["rollout", "set", "flowers", "--split", "1=50,2=50", "--rule", "half"], environment: environment)
            .succeeded()
        try await Command.depot(["experiment", "metric", "add", "flowers", "accepted", "--kind", "proportion"], environment: environment)
            .succeeded()
        let library = try LiteRTLibrary(path: await LiteRTRuntime.libraryPath())
        var onVersion = [1: 0, 2: 0]
        var accepted = [1: 0, 2: 0]
        for index in 0..<40 {
            let downloader = try published.downloader {
                $0.cacheDirectory = published.scratch.url.appendingPathComponent("device-\(index)")
                $0.installationID = "device-\(index)"
            }
            let model = try await downloader.model(named: "flowers")
            onVersion[model.version, default: 0] += 1
            let interpreter = try LiteRTInterpreter(model: model, library: library, outcomes: downloader.outcomes)
            for _ in 0..<3 { _ = try interpreter.run([TensorValue(float32: [0.9, -0.3, 0.25, 0.5], shape: [1, 4])]) }
            // Version 2's users accept its answer far more often: 9 in 10 of its devices against 1
            // in 5 of version 1's, counted per version (the split is new each run, so counting by
            // device index let the two rates vary with it, and the effect was once not significant).
            let nth = onVersion[model.version, default: 0]
            let accepts = model.version == 2 ? nth % 10 != 0 : nth % 5 == 0
            if accepts {
                try downloader.outcomes.record("accepted", for: model)
                accepted[model.version, default: 0] += 1
            }
            let refused = #expect(throws: DepotError.self) { try downloader.outcomes.record("load_failed", for: model) }
            #expect(refused?.code == .invalidMetric, "a model-health name is the SDK's own")
            let applied = try await downloader.sendOutcomes()
            // installed, download_finished, load_succeeded, inferences, latency (+ accepted).
            #expect(applied == 5 + (accepts ? 1 : 0), "one entry per metric: the three runs were added up on the device")
            #expect(downloader.outcomes.pendingEvents == 0)
        }
        #expect(onVersion[1]! > 5 && onVersion[2]! > 5, "\(onVersion)")

        let results = try await Command.depot(["experiment", "show", "flowers", "--json"], environment: environment).decode(
            ExperimentResults.self)
        let arm = try #require(results.arms.first)
        #expect(arm.name == "half" && arm.control == 1)
        #expect(arm.installations == ["1": onVersion[1]!, "2": onVersion[2]!])
        func statistic(_ metric: String, _ version: Int) -> MetricStatistic? {
            arm.metrics.first { $0.metric.name == metric }?.statistics["\(version)"]
        }
        for version in [1, 2] {
            let devices = onVersion[version]!
            #expect(statistic("installed", version) == MetricStatistic(kind: .proportion, n: devices, sum: Double(devices)))
            #expect(statistic("load_succeeded", version) == MetricStatistic(kind: .proportion, n: devices, sum: Double(devices)))
            #expect(
                statistic("inferences", version)
                    == MetricStatistic(kind: .mean, n: devices, sum: Double(3 * devices), sumOfSquares: Double(9 * devices)))
            #expect(statistic("inference_latency_ms", version)?.n == devices)
            #expect((statistic("inference_latency_ms", version)?.mean ?? 0) > 0)
            #expect(statistic("accepted", version) == MetricStatistic(kind: .proportion, n: devices, sum: Double(accepted[version]!)))
        }
        let effect = try #require(arm.metrics.first { $0.metric.name == "accepted" }?.effects.first)
        #expect(effect.version == 2 && effect.absolute.fixed.lower > 0, "a significant rise at a fixed horizon: \(effect)")

        let text = try await Command.depot(["experiment", "show", "flowers"], environment: environment)
        #expect(text.status == 0)
        #expect(text.text.contains("rule half (\(arm.arm)) — control: version 1"), "the arm by its rule's name: \(text.text)")
        #expect(text.text.split(separator: "\n").contains { $0.hasPrefix("accepted") && $0.contains(" 2 ") }, "\(text.text)")
        // An aligned table: every row's cells start where the header's columns do.
        let lines = text.text.split(separator: "\n").map { Array($0) }
        let header = try #require(lines.first { String($0).hasPrefix("METRIC ") })
        let starts = header.indices.filter { $0 > 0 && header[$0] != " " && header[$0 - 1] == " " && header[$0 - 2] == " " }
        let rows = lines.filter { String($0).hasPrefix("accepted ") }
        #expect(starts.count == 6 && rows.count >= 2, "\(text.text)")
        for row in rows {
            #expect(
                starts.prefix(3).allSatisfy { $0 < row.count && row[$0] != " " && row[$0 - 1] == " " },
                "the version, installations and mean columns line up: \(text.text)")
        }
    }

    /// A device sends the token it holds with each check (the server's `304` then brings no new
    /// one while it is from today: `ExposureAPITests`) and keeps it for its events.
    @Test func aDeviceSendsItsTokenWithItsChecksAndA304BringsNoNewOne() async throws {
        let published = try await PublishedModel()
        let transport = RecordingTransport()
        let downloader = try published.downloader {
            $0.transport = transport
            $0.installationID = "device-1"
        }
        let model = try await downloader.model(named: "flowers")
        let token = try #require(downloader.outcomes.exposure(for: model.manifest))
        _ = try await downloader.model(named: "flowers")
        let checks = transport.calls.withLock { $0.filter { !$0.isDownload && $0.request.url?.path.hasSuffix("/manifest") == true } }
        #expect(checks.count == 2)
        #expect(checks.first?.request.value(forHTTPHeaderField: DepotHeader.exposure) == nil, "nothing held before the first answer")
        #expect(checks.last?.request.value(forHTTPHeaderField: DepotHeader.exposure) == token)
        #expect(checks.last?.request.value(forHTTPHeaderField: "If-None-Match") != nil, "the second check is conditional")
        #expect(downloader.outcomes.exposure(for: model.manifest) == token, "kept through the 304")
        #expect(try await downloader.sendOutcomes() > 0, "its events, with that token, are accepted")
    }

    @Test func theQueueSurvivesARestartIsSentByAChecksBackgroundSendAndCanBeTurnedOff() async throws {
        let published = try await PublishedModel(["float_classifier"])
        let model = try await published.downloader { $0.recordsOutcomes = false }.model(named: "flowers")
        #expect(!FileManager.default.fileExists(atPath: published.cache.appendingPathComponent("outcomes.json").path))

        let first = try published.downloader()
        for _ in 0..<7 { try first.outcomes.record("accepted", value: 2, for: model) }
        first.outcomes.save()
        let restarted = try published.downloader { $0.outcomeSendInterval = .zero }
        #expect(restarted.outcomes.pendingEvents == 7, "the queue was read back from the cache")
        _ = try await restarted.model(named: "flowers")
        await restarted.backgroundOutcomeSend?.value
        #expect(restarted.outcomes.pendingEvents == 0, "the check sent the queue in the background")
        let results = try await Command.depot(["experiment", "metrics", "flowers", "--json"], environment: published.server.environment)
            .decode([ExperimentMetric].self)
        #expect(results.contains { $0.name == "accepted" && $0.kind == .sum }, "recorded without a declaration: read as a sum")

        let offline = try published.downloader()
        offline.outcomes.isEnabled = false
        #expect(!FileManager.default.fileExists(atPath: published.cache.appendingPathComponent("outcomes.json").path))
        try? offline.outcomes.record("accepted", for: model)
        #expect(offline.outcomes.pendingEvents == 0)
        let sent = try await offline.sendOutcomes()
        #expect(sent == 0)
    }
}
