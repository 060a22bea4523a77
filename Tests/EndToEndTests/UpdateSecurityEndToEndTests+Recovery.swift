import Crypto
import Foundation
import ModelDepot
import ModelDepotShared
import Synchronization
import TestSupport
import Testing

/// Outcomes the app can see when a check fails, and devices that recover from a stolen key and
/// from routine admin actions instead of refusing their server forever.
extension UpdateSecurityEndToEndTests {
    @Test func anExpiredManifestThatCannotBeRenewedIsReportedWithTheModel() async throws {
        try await withDevice { device in
            let failures = Mutex<[DepotError]>([])
            let center = NotificationCenter()
            let observer = center.addObserver(forName: .modelDownloadDidFail, object: nil, queue: nil) { note in
                if let error = note.userInfo?[ModelDownloader.errorKey] as? DepotError { failures.withLock { $0.append(error) } }
            }
            defer { center.removeObserver(observer) }
            let watched = try device.downloader { $0.notificationCenter = center }

            // Confirmed an hour later with a 304.
            device.clock.advance(by: 3600)
            let confirmed = try await watched.model(named: "flowers")
            #expect(confirmed.checkFailure == nil)
            #expect(confirmed.confirmedAt == device.clock.now)
            #expect(confirmed.expires > device.clock.now)

            // A week later the manifest has expired and the server fails.
            device.clock.advance(by: 8 * 24 * 3600)
            device.proxy.take(
                device.manifestPath,
                .response(
                    status: .serviceUnavailable, headers: ["Content-Type": "application/json"],
                    body: Data(#"{"error":{"code":"unavailable","message":"down for maintenance"}}"#.utf8)))
            let events = await watched.events()
            let stale = try await watched.model(named: "flowers")
            #expect(stale.version == 1)
            let failure = try #require(stale.checkFailure, "the refused refresh was silent")
            #expect(failure.code == .manifestExpired)
            #expect(failure.message.contains("expired at") && failure.message.contains("down for maintenance"))
            #expect(stale.confirmedAt == confirmed.confirmedAt)
            #expect(device.proxy.lastHeaders(device.manifestPath) != nil, "the check reached the failing server")
            #expect(failures.withLock { $0 } == [failure])
            for await event in events {
                guard event.kind == .failed else { continue }
                #expect(event.error == failure)
                break
            }

            // Offline: nothing answers at the server's address.
            let offline = try device.downloader { $0.serverURL = URL(string: "http://127.0.0.1:1")! }
            let unreachable = try #require(try await offline.model(named: "flowers").checkFailure)
            #expect(unreachable.code == .manifestExpired && unreachable.message.contains("Could not reach http://127.0.0.1:1"))
        }
    }

    @Test func aFailedCheckBeforeExpiryReportsTheServersError() async throws {
        try await withDevice { device in
            device.proxy.take(device.manifestPath, .response(status: .internalServerError, headers: [:], body: Data()))
            let model = try await device.downloader.model(named: "flowers")
            #expect(model.version == 1)
            #expect(model.checkFailure?.code == .unavailable)
            #expect(model.checkFailure?.message.contains("The server answered 500. The current model (v1) stays in use.") == true)
        }
    }

    @Test func aFastForwardByAStolenKeyEndsWhenTheOwnerRotatesTheKeys() async throws {
        try await withDevice { device in
            // A stolen online key signs manifest version 2^53, and the device takes it.
            let real = try await device.recordManifest()
            device.serveManifest(
                try forge(real.body, signers: [try device.stolenKey(thatSigned: real.body)]) { $0.manifestVersion = 1 << 53 })
            #expect(try await device.downloader.model(named: "flowers").version == 1)
            #expect(try floor(device) == 1 << 53, "the forged manifest version was not accepted")

            // Until the owner acts, the real server's manifests are refused.
            device.proxy.release(device.manifestPath)
            _ = try await device.publish("float_classifier_labels")
            try await expectRefused(device, .manifestRollback, keeping: 1)

            // The owner rotates the online key; the device follows the new root and updates again.
            let rotated = try await Command.depot(
                ["keys", "rotate", "--root-key", device.published.root.file], environment: device.environment)
            #expect(rotated.status == 0, "\(rotated.error)")
            #expect(try await device.downloader.model(named: "flowers").version == 2)
            #expect(try floor(device) < 1 << 53)
            _ = try await device.publish("int8_conv")
            #expect(try await device.downloader.model(named: "flowers").version == 3)
        }
    }

    @Test func aModelDeletedAndCreatedAgainKeepsUpdatingDevices() async throws {
        try await withDevice { device in
            let before = try floor(device)
            let deleted = try await Command.depot(["models", "delete", "flowers", "--force"], environment: device.environment)
            #expect(deleted.status == 0, "\(deleted.error)")
            try await Command.depot(["models", "create", "flowers"], environment: device.environment).succeeded()
            let again = try await device.publish("int8_conv")
            let model = try await device.downloader.model(named: "flowers")
            #expect(model.version == 1 && model.sha256 == again.sha256)
            #expect(try floor(device) > before)
        }
    }

    @Test func aRestoredOlderDatabaseStillHandsOutNewerManifestVersions() async throws {
        let published = try await PublishedModel()
        let storage = published.server.storage
        let downloader = try published.downloader()
        #expect(try await downloader.model(named: "flowers").version == 1)
        #expect(try await published.server.stop(signal: SIGTERM) == 0)
        let backup = published.scratch.url.appendingPathComponent("backup")
        try FileManager.default.copyItem(at: storage, to: backup)

        // The server goes on: v2 is published and the device takes it.
        let later = try await ServerProcess(storage: storage)
        try await Command.depot(
            ["upload", "flowers", Binaries.fixture("float_classifier_labels"), "--publish"], environment: later.environment
        )
        .succeeded()
        #expect(try await published.downloader { $0.serverURL = later.url }.model(named: "flowers").version == 2)
        #expect(try await later.stop(signal: SIGTERM) == 0)

        // The operator restores the backup from before v2: the device follows it back to v1.
        try FileManager.default.removeItem(at: storage)
        try FileManager.default.copyItem(at: backup, to: storage)
        let restored = try await ServerProcess(storage: storage)
        #expect(try await published.downloader { $0.serverURL = restored.url }.model(named: "flowers").version == 1)
    }

    /// The manifest-version floor the device keeps for `flowers`.
    func floor(_ device: Device) throws -> Int {
        let state = try JSONSerialization.jsonObject(
            with: Data(contentsOf: device.published.cache.appendingPathComponent("trust/state.json")))
        return try #require((state as? [String: Any])?["manifestVersions"] as? [String: Int])["flowers"] ?? 0
    }
}
