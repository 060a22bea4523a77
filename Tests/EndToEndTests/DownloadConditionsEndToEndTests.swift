import Crypto
import Foundation
import ModelDepot
import ModelDepotShared
import Synchronization
import TestSupport
import Testing

/// Download conditions against a real server; the device's state is the one test double (a
/// test machine is never on cellular, in Low Power Mode or hot).
@Suite struct DownloadConditionsEndToEndTests {
    /// A device whose status a test scripts: each look gets the status `script` makes of the
    /// number of looks so far (1 for the first) and the bytes of the download on disk.
    final class ScriptedDevice: DeviceStatusProvider {
        let looks = Mutex(0)
        let partial = Mutex<URL?>(nil)
        let script: @Sendable (_ look: Int, _ downloaded: Int) -> DeviceStatus
        /// Who waits for how many looks.
        private let waiting = Mutex<[(looks: Int, continuation: CheckedContinuation<Void, Never>)]>([])

        init(_ script: @escaping @Sendable (_ look: Int, _ downloaded: Int) -> DeviceStatus) { self.script = script }

        /// Returns once the SDK has looked at the device `count` times in all: a wait with no
        /// deadline, so a loaded machine makes it longer, never wrong.
        func looked(_ count: Int) async {
            await withCheckedContinuation { continuation in
                let now = looks.withLock { $0 }
                if now >= count { return continuation.resume() }
                waiting.withLock { $0.append((count, continuation)) }
                if looks.withLock({ $0 }) >= count { resumeWaiters() }
            }
        }

        private func resumeWaiters() {
            let count = looks.withLock { $0 }
            let ready = waiting.withLock { waiting in
                let ready = waiting.filter { $0.looks <= count }
                waiting.removeAll { $0.looks <= count }
                return ready
            }
            for waiter in ready { waiter.continuation.resume() }
        }

        func status(for directory: URL) -> DeviceStatus {
            let look = looks.withLock { count in
                count += 1
                return count
            }
            defer { resumeWaiters() }
            let downloaded = partial.withLock { $0 }.flatMap {
                try? FileManager.default.attributesOfItem(atPath: $0.path)[.size] as? NSNumber
            }
            return script(look, downloaded?.intValue ?? 0)
        }
    }

    static let roomy: Int64 = 1 << 40

    func downloader(_ device: ScriptedDevice, _ change: (inout ModelDownloaderConfiguration) -> Void = { _ in })
        async throws -> (PublishedModel, ModelDownloader, RecordingTransport)
    {
        let published = try await PublishedModel()
        let transport = RecordingTransport()
        let downloader = try published.downloader {
            $0.deviceStatus = device
            $0.transport = transport
            change(&$0)
        }
        return (published, downloader, transport)
    }

    /// The partial file of the fixture `float_classifier` (992 bytes), published as v1.
    func partialFile(_ published: PublishedModel) throws -> URL {
        let sha256 = try SHA256.digest(ofFileAt: Binaries.fixture("float_classifier")).hex
        return published.cache.appendingPathComponent("partial/\(sha256).part")
    }

    @Test func cellularDownloadFailsAtOnceWhenNotAllowed() async throws {
        let (published, downloader, transport) = try await downloader(
            ScriptedDevice { _, _ in DeviceStatus(isOnCellular: true, freeSpace: Self.roomy) })
        defer { withExtendedLifetime(published) {} }
        var conditions = DownloadConditions()
        conditions.allowsCellularAccess = false
        await #expect(
            throws: DepotError(
                .conditionsNotMet,
                "'flowers' v1 was not downloaded: the device is on cellular and cellular downloads are not allowed. No model is installed yet."
            )
        ) {
            try await downloader.model(named: "flowers", conditions: conditions)
        }
        #expect(await downloader.latestModelFilePath("flowers") == nil)
        #expect(transport.rangeStarts.isEmpty, "no byte was asked for")
    }

    @Test func downloadWaitsUntilConditionsHold() async throws {
        let device = ScriptedDevice { look, _ in DeviceStatus(isOnCellular: look <= 3, isNetworkMetered: look <= 3, freeSpace: Self.roomy) }
        let (published, downloader, _) = try await downloader(device)
        defer { withExtendedLifetime(published) {} }
        var conditions = DownloadConditions()
        conditions.allowsExpensiveNetworkAccess = false
        conditions.waitsUpTo = .seconds(30)
        conditions.pollInterval = .milliseconds(10)
        let model = try await downloader.model(named: "flowers", conditions: conditions)
        #expect(model.version == 1)
        #expect(device.looks.withLock { $0 } >= 4, "it looked until the network was no longer expensive")
    }

    @Test func notEnoughSpaceFailsClearlyAndWritesNothing() async throws {
        let (published, downloader, _) = try await downloader(ScriptedDevice { _, _ in DeviceStatus(freeSpace: 500) })
        await #expect(
            throws: DepotError(
                .notEnoughSpace,
                "Downloading 'flowers' v1 needs 992 free bytes (992 for the file, 0 to keep free); 500 are free. Nothing was written. No model is installed yet."
            )
        ) {
            try await downloader.model(named: "flowers")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: published.cache.appendingPathComponent("partial").path).isEmpty)
    }

    @Test func aDownloadThatMeetsCellularMidwayStopsThereKeepsItsBytesAndResumes() async throws {
        let onWiFi = Mutex(false)
        // The device moves onto cellular once 400 of the 992 bytes are on it, until the test puts it back on Wi-Fi.
        let device = ScriptedDevice { _, downloaded in
            let cellular = downloaded >= 400 && !onWiFi.withLock { $0 }
            return DeviceStatus(isOnCellular: cellular, isNetworkMetered: cellular, freeSpace: Self.roomy)
        }
        let (published, downloader, transport) = try await downloader(device) { $0.downloadChunkSize = 200 }
        defer { withExtendedLifetime(published) {} }
        device.partial.withLock { $0 = try? partialFile(published) }
        var conditions = DownloadConditions()
        conditions.allowsCellularAccess = false

        await #expect(
            throws: DepotError(
                .conditionsNotMet,
                "'flowers' v1 was not downloaded: the device is on cellular and cellular downloads are not allowed. The 400 bytes downloaded so far are kept for next time. No model is installed yet."
            )
        ) {
            try await downloader.model(named: "flowers", conditions: conditions)
        }
        #expect(transport.rangeStarts == [0, 200], "no range was asked for on cellular")
        #expect(try FileManager.default.attributesOfItem(atPath: partialFile(published).path)[.size] as? NSNumber == 400)

        onWiFi.withLock { $0 = true }
        let events = await downloader.events()
        let model = try await downloader.model(named: "flowers", conditions: conditions)
        #expect(model.version == 1)
        #expect(transport.rangeStarts == [0, 200, 400, 600, 800], "the download went on from byte 400")
        var firstBytes: Int?
        for await event in events {
            if event.kind == .downloading {
                firstBytes = event.bytes
                break
            }
        }
        #expect(firstBytes == 400)
    }

    @Test func aDownloadThatMeetsCellularMidwayWaitsForWiFiWithinItsBound() async throws {
        let cellularLooks = Mutex(0)
        // From 400 bytes on, the device is on cellular for three looks, then back on Wi-Fi.
        let device = ScriptedDevice { _, downloaded in
            let cellular =
                downloaded >= 400
                && cellularLooks.withLock { looks in
                    looks += 1
                    return looks <= 3
                }
            return DeviceStatus(isOnCellular: cellular, isNetworkMetered: cellular, freeSpace: Self.roomy)
        }
        let (published, downloader, transport) = try await downloader(device) { $0.downloadChunkSize = 200 }
        defer { withExtendedLifetime(published) {} }
        device.partial.withLock { $0 = try? partialFile(published) }
        var conditions = DownloadConditions()
        conditions.allowsCellularAccess = false
        conditions.waitsUpTo = .seconds(30)
        conditions.pollInterval = .milliseconds(10)
        let model = try await downloader.model(named: "flowers", conditions: conditions)
        #expect(model.version == 1)
        #expect(cellularLooks.withLock { $0 } >= 4, "it waited through the cellular looks")
        #expect(transport.rangeStarts == [0, 200, 400, 600, 800], "each byte was fetched once")
    }

    @Test func everyRangeCarriesTheNetworksItMayUseAndManifestChecksAnyNetwork() async throws {
        let (published, downloader, transport) = try await downloader(ScriptedDevice { _, _ in DeviceStatus(freeSpace: Self.roomy) }) {
            $0.downloadChunkSize = 500
        }
        defer { withExtendedLifetime(published) {} }
        var conditions = DownloadConditions()
        conditions.allowsCellularAccess = false
        conditions.allowsConstrainedNetworkAccess = false
        _ = try await downloader.model(named: "flowers", conditions: conditions)
        let calls = transport.calls.withLock { $0 }
        let ranges = calls.filter(\.isDownload)
        #expect(ranges.count == 2)
        #expect(ranges.allSatisfy { $0.network == NetworkAccess(allowsCellular: false, allowsExpensive: true, allowsConstrained: false) })
        #expect(calls.filter { !$0.isDownload }.allSatisfy { $0.network == .any }, "a manifest check is tiny and needs no conditions")
    }

    @Test func lowPowerModePausesADownloadUntilItIsOff() async throws {
        let lowPower = Mutex(true)
        let device = ScriptedDevice { _, _ in DeviceStatus(isLowPowerModeEnabled: lowPower.withLock { $0 }, freeSpace: Self.roomy) }
        let (published, downloader, transport) = try await downloader(device)
        defer { withExtendedLifetime(published) {} }
        var conditions = DownloadConditions()
        conditions.pausesInLowPowerMode = true
        await #expect(
            throws: DepotError(.conditionsNotMet, "'flowers' v1 was not downloaded: Low Power Mode is on. No model is installed yet.")
        ) {
            try await downloader.model(named: "flowers", conditions: conditions)
        }
        #expect(transport.rangeStarts.isEmpty)

        conditions.waitsUpTo = .seconds(30)
        conditions.pollInterval = .milliseconds(10)
        let before = device.looks.withLock { $0 }
        let task = Task { try await downloader.model(named: "flowers", conditions: conditions) }
        await device.looked(before + 3)
        #expect(transport.rangeStarts.isEmpty, "the download waits while Low Power Mode is on")
        lowPower.withLock { $0 = false }
        #expect(try await task.value.version == 1)
    }

    @Test func aCriticallyHotDevicePausesByDefaultUnlessTheAppSaysOtherwise() async throws {
        let (published, downloader, _) = try await downloader(
            ScriptedDevice { _, _ in DeviceStatus(thermalState: .critical, freeSpace: Self.roomy) })
        defer { withExtendedLifetime(published) {} }
        await #expect(
            throws: DepotError(
                .conditionsNotMet, "'flowers' v1 was not downloaded: the device's thermal state is critical. No model is installed yet.")
        ) {
            try await downloader.model(named: "flowers")
        }
        var conditions = DownloadConditions()
        conditions.pausesAtThermalState = nil
        #expect(try await downloader.model(named: "flowers", conditions: conditions).version == 1)
    }

    @Test func eachRangeRunsWithTheSystemsLeaveToFinishInTheBackground() async throws {
        final class CountingExecution: BackgroundExecution {
            let inside = Mutex(0)
            let runs = Mutex<[String]>([])
            func run<Result: Sendable>(named name: String, _ work: @escaping @Sendable () async throws -> Result) async throws -> Result {
                runs.withLock { $0.append(name) }
                inside.withLock { $0 += 1 }
                defer { inside.withLock { $0 -= 1 } }
                return try await work()
            }
        }
        let execution = CountingExecution()
        let outside = Mutex(0)
        let published = try await PublishedModel()
        defer { withExtendedLifetime(published) {} }
        let transport = RecordingTransport { _ in if execution.inside.withLock({ $0 }) == 0 { outside.withLock { $0 += 1 } } }
        let downloader = try published.downloader {
            $0.transport = transport
            $0.backgroundExecution = execution
            $0.downloadChunkSize = 300
        }
        _ = try await downloader.model(named: "flowers")
        #expect(execution.runs.withLock { $0 } == Array(repeating: "ModelDepot flowers v1", count: 4))
        #expect(outside.withLock { $0 } == 0, "no range ran without the system's leave")
    }
}
