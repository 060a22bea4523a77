import Foundation
import ModelDepotShared
import Synchronization
import TestSupport
import Testing

@testable import ModelDepot

/// What the SDK keeps on the device and says about it, against a real server: state out of the
/// models' folder, a kept file that cannot be read stopping the check rather than resetting trust,
/// the device described without the app's help, and callbacks where an interface can use them.
@Suite struct DeviceStorageEndToEndTests {
    @Test func stateKeptApartSurvivesAPurgeOfTheModels() async throws {
        let published = try await PublishedModel()
        defer { withExtendedLifetime(published) {} }
        let state = published.scratch.url.appendingPathComponent("state")
        let first = try published.downloader { $0.stateDirectory = state }
        #expect(try await first.model(named: "flowers").version == 1)
        for name in ["installation-id", "trust/state.json", "trust/root.json"] {
            #expect(FileManager.default.fileExists(atPath: state.appendingPathComponent(name).path), "\(name) is in the state directory")
            #expect(
                !FileManager.default.fileExists(atPath: published.cache.appendingPathComponent(name).path),
                "\(name) is not beside the models")
        }

        // The system purges the cache folder.
        try FileManager.default.removeItem(at: published.cache)
        let second = try published.downloader { $0.stateDirectory = state }
        #expect(second.installationID == first.installationID, "the device stays in its rollout buckets")
        let floors =
            try JSONSerialization.jsonObject(with: Data(contentsOf: state.appendingPathComponent("trust/state.json"))) as? [String: Any]
        #expect((floors?["manifestVersions"] as? [String: Int])?["flowers"] != nil, "rollback protection is kept")
        #expect(try await second.model(named: "flowers").version == 1)
    }

    @Test func stateAnEarlierSDKKeptBesideTheModelsMovesOnceWithTheSameInstallationID() async throws {
        let published = try await PublishedModel()
        defer { withExtendedLifetime(published) {} }
        let old = try published.downloader()
        #expect(try await old.model(named: "flowers").version == 1)
        let state = published.scratch.url.appendingPathComponent("state")
        let moved = try published.downloader { $0.stateDirectory = state }
        #expect(moved.installationID == old.installationID)
        #expect(FileManager.default.fileExists(atPath: state.appendingPathComponent("trust/state.json").path))
        #expect(!FileManager.default.fileExists(atPath: published.cache.appendingPathComponent("trust").path))
        #expect(try await moved.model(named: "flowers").version == 1)
    }

    @Test func anUnreadableTrustStateStopsTheCheckAndKeepsTheModel() async throws {
        let published = try await PublishedModel()
        defer { withExtendedLifetime(published) {} }
        let downloader = try published.downloader()
        #expect(try await downloader.model(named: "flowers").version == 1)
        try await Command.depot(
            ["upload", "flowers", Binaries.fixture("float_classifier_labels"), "--publish"],
            environment: published.server.environment
        ).succeeded()
        // Before the first unlock the file exists and cannot be read; a directory in its place does
        // the same here, where the tests run as root.
        let file = published.cache.appendingPathComponent("trust/state.json")
        try FileManager.default.removeItem(at: file)
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
        let again = try published.downloader()
        do {
            let model = try await again.model(named: "flowers")
            Issue.record("the check went on with no trust state: v\(model.version)")
        } catch let error as DepotError {
            #expect(error.code == .storageUnreadable, "\(error)")
            #expect(error.message.contains("trust/state.json' exists but could not be read"), "\(error)")
        }
        #expect(try await again.model(named: "flowers", policy: .localModel).version == 1, "the installed model stays in use")
        var isDirectory: ObjCBool = false
        #expect(
            FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory) && isDirectory.boolValue,
            "nothing was written over it")
    }

    @Test func anUnreadableInstallationIDIsAnErrorNotANewDevice() async throws {
        let published = try await PublishedModel()
        defer { withExtendedLifetime(published) {} }
        _ = try published.downloader()
        let file = published.cache.appendingPathComponent("installation-id")
        try FileManager.default.removeItem(at: file)
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
        #expect(throws: DepotError.self) { try published.downloader() }
        #expect(FileManager.default.fileExists(atPath: file.path), "nothing was written over it")
    }

    @Test func rulesForThePlatformReachDevicesWhoseAppNamedNone() async throws {
        let published = try await PublishedModel(["float_classifier", "float_classifier_labels"])
        defer { withExtendedLifetime(published) {} }
        let set = try await Command.depot(
            [
                "rollout", "set", "flowers", "--default", "1", "--split", "2=100", "--when", "platform=linux",
                "--rule", "linux-only",
            ], environment: published.server.environment)
        #expect(set.status == 0, "\(set.error)")
        let automatic = try published.downloader()
        #expect(try await automatic.model(named: "flowers").version == 2, "the SDK said platform=linux by itself")

        let iosScratch = try Scratch()
        let ios = try published.downloader {
            $0.device = DeviceContext(platform: "ios")
            $0.cacheDirectory = iosScratch.url
        }
        #expect(try await ios.model(named: "flowers").version == 1, "what the app sets wins")
    }

    /// Marks the main queue, where the main actor runs its work (on Linux `dispatch_main` serves
    /// that queue from a thread other than the process's first, so `Thread.isMainThread` says no).
    static let mainQueue: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    static var onMainQueue: Bool { DispatchQueue.getSpecific(key: mainQueue) == true }

    @Test func notificationsAndProgressArriveOnTheMainActor() async throws {
        final class WatchedProgress: Progress, @unchecked Sendable {
            // @unchecked: the flags are written by the setter under `lock`.
            let lock = NSLock()
            var offMain = 0
            var updates = 0
            override var completedUnitCount: Int64 {
                get { super.completedUnitCount }
                set {
                    lock.withLock {
                        updates += 1
                        if !DeviceStorageEndToEndTests.onMainQueue { offMain += 1 }
                    }
                    super.completedUnitCount = newValue
                }
            }
        }
        let published = try await PublishedModel()
        defer { withExtendedLifetime(published) {} }
        let center = NotificationCenter()
        let downloader = try published.downloader {
            $0.notificationCenter = center
            $0.downloadChunkSize = 300
        }
        let posts = Mutex<[Bool]>([])
        let observer = center.addObserver(forName: .modelDownloadDidSucceed, object: nil, queue: nil) { _ in
            posts.withLock { $0.append(Self.onMainQueue) }
        }
        defer { center.removeObserver(observer) }
        _ = Self.mainQueue
        let progress = WatchedProgress(totalUnitCount: 1)
        await downloader.track(progress, for: try ModelName("flowers"))
        _ = try await downloader.model(named: "flowers")
        #expect(posts.withLock { $0 } == [true], "the success was posted once, on the main actor")
        #expect(progress.lock.withLock { progress.updates } >= 4 && progress.lock.withLock { progress.offMain } == 0)
    }
}

/// The work an app's background task gives the SDK: check, download, send, within the system's time.
@Suite struct BackgroundRefreshEndToEndTests {
    @Test func aRefreshInstallsWhatChangedConfirmsTheRestAndSendsOutcomes() async throws {
        let published = try await PublishedModel()
        defer { withExtendedLifetime(published) {} }
        let downloader = try published.downloader()
        let first = await downloader.performBackgroundRefresh(models: ["flowers", "missing"])
        #expect(first.installed == ["flowers"] && first.upToDate.isEmpty && first.finished)
        #expect(first.failed["missing"]?.code == .notFound, "\(first.failed)")
        #expect(first.outcomesSent > 0 && first.outcomeFailure == nil, "the download's outcomes went with the refresh")

        let second = await downloader.performBackgroundRefresh(models: ["flowers"])
        #expect(second.installed.isEmpty && second.upToDate == ["flowers"] && second.failed.isEmpty && second.finished)
    }

    @Test func aRefreshCutShortByTheSystemSaysSoAndKeepsWhatItHad() async throws {
        let published = try await PublishedModel()
        defer { withExtendedLifetime(published) {} }
        let device = DownloadConditionsEndToEndTests.ScriptedDevice { _, _ in DeviceStatus(isCharging: false, freeSpace: 1 << 40) }
        let downloader = try published.downloader { $0.deviceStatus = device }
        var conditions = DownloadConditions()
        conditions.requiresCharging = true
        conditions.waitsUpTo = .seconds(3_600)
        conditions.pollInterval = .milliseconds(10)
        let work = Task { await downloader.performBackgroundRefresh(models: ["flowers"], conditions: conditions) }
        await device.looked(2)  // the refresh waits for power
        work.cancel()  // the task's expirationHandler
        let result = await work.value
        #expect(!result.finished && result.installed.isEmpty && result.failed.isEmpty)
        #expect(await downloader.latestModelFilePath("flowers") == nil)
    }
}
