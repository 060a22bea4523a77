import Foundation
import ModelDepotLiteRT
import ModelDepotRollouts
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepot

/// A guarded rollout with the real CLI, a real `depot serve` and real `ModelDownloader` devices
/// running their model in LiteRT: a version whose users crash is rolled back by the guard's
/// review, and the devices that had it get the control version again at their next check.
@Suite struct GuardedRolloutEndToEndTests {
    @Test func aVersionWhoseDevicesCrashIsRolledBackAndItsDevicesGetTheControlAgain() async throws {
        // The server's own reviews wait a day: only the test's review below may move the guard.
        let published = try await PublishedModel(
            ["float_classifier", "float_classifier_labels"], arguments: ["--guard-review-interval", "86400"])
        let environment = published.server.environment
        try await Command.depot(["rollout", "set", "flowers", "--split", "1=100", "--rule", "main"], environment: environment).succeeded()
        try await Command.depot(
            ["experiment", "metric", "add", "flowers", "crashed", "--kind", "proportion", "--better", "decrease", "--guardrail"],
            environment: environment
        ).succeeded()

        let falling = try await Command.depot(
            ["rollout", "guard", "flowers", "--rule", "main", "--to", "2", "--stages", "5,1,100"], environment: environment)
        #expect(falling.status != 0 && falling.error.contains("Stage 2 (1 %) is not above the stage before"), "\(falling.error)")
        let noSecret = try await Command.depot(
            ["rollout", "guard", "flowers", "--rule", "main", "--to", "2", "--webhook", "https://hooks.example/x"],
            environment: environment)
        #expect(noSecret.status != 0 && noSecret.error.contains("DEPOT_WEBHOOK_SECRET"), "\(noSecret.error)")
        let duration = try await Command.depot(
            ["rollout", "guard", "flowers", "--rule", "main", "--to", "2", "--stage-duration", "soon"], environment: environment)
        #expect(duration.status != 0 && duration.error.contains("Duration 'soon'"), "\(duration.error)")
        let interval = try await Command.depot(
            ["serve", "--guard-review-interval", "5", "--port", "0", "--storage", published.scratch.path("other")],
            environment: environment)
        #expect(interval.status != 0 && interval.error.contains("must be 10 to 86400 seconds, not 5"), "\(interval.error)")
        await #expect(
            try Command.depot(["rollout", "guard", "status", "flowers", "--json"], environment: environment).decode(RolloutGuards.self)
                .guards.isEmpty,
            "the refused starts stored nothing")

        // Every device here is on 127.0.0.1, one client network: the guard is told to trust it.
        let started = try await Command.depot(
            [
                "rollout", "guard", "flowers", "--rule", "main", "--to", "2", "--stages", "50,100",
                "--min-installations", "5", "--min-networks", "1", "--json",
            ], environment: environment
        ).decode(RolloutGuard.self)
        #expect(started.state == .running && started.share == 5_000 && started.control == 1)

        let library = try LiteRTLibrary(path: await LiteRTRuntime.libraryPath())
        var devices: [(downloader: ModelDownloader, version: Int)] = []
        for index in 0..<100 {
            let downloader = try published.downloader {
                $0.cacheDirectory = published.scratch.url.appendingPathComponent("device-\(index)")
                $0.installationID = "device-\(index)"
            }
            let model = try await downloader.model(named: "flowers")
            let interpreter = try LiteRTInterpreter(model: model, library: library, outcomes: downloader.outcomes)
            _ = try interpreter.run([TensorValue(float32: [0.9, -0.3, 0.25, 0.5], shape: [1, 4])])
            // Version 2 crashes the app after its first answer. (A sequential interval, safe to read
            // at every look, needs some 50 installations a side to tell even this from noise.)
            if model.version == 2 { try downloader.outcomes.record("crashed", for: model) }
            try await downloader.sendOutcomes()
            devices.append((downloader, model.version))
        }
        let onTarget = devices.filter { $0.version == 2 }.count
        #expect(
            onTarget >= 30 && devices.count - onTarget >= 30,
            "the first stage split the devices about in half: \(onTarget) of 100 on version 2")

        let reviewed = try await Command.depot(["rollout", "guard", "review", "flowers", "--json"], environment: environment).decode(
            RolloutGuards.self)
        let rolledBack = try #require(reviewed.guards.first)
        #expect(rolledBack.state == .rolledBack, "\(rolledBack.moves.map(\.reason))")
        #expect(rolledBack.moves.last?.reason.contains("Regression at 50 %: crashed") == true, "\(rolledBack.moves.last?.reason ?? "")")
        let status = try await Command.depot(["rollout", "guard", "status", "flowers"], environment: environment)
        #expect(status.status == 0 && status.text.contains("rule main: version 2 against version 1 — rolled back at 0 %"), "\(status.text)")
        #expect(status.text.contains("crashed:") && status.text.contains("REGRESSION"), "\(status.text)")
        let history = try await Command.depot(["rollout", "history", "flowers"], environment: environment)
        #expect(history.text.contains("key guard") && history.text.contains("why:    Regression at 50 %"), "\(history.text)")

        for device in devices where device.version == 2 {
            let again = try await device.downloader.model(named: "flowers")
            #expect(again.version == 1, "a device that had version 2 is on version 1 again")
        }
    }
}
