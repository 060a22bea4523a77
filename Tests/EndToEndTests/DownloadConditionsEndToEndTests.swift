import Foundation
import ModelDepot
import ModelDepotShared
import Synchronization
import TestSupport
import Testing

/// Download conditions against a real server; the device's state is the one test double (a
/// test machine is never on cellular).
@Suite struct DownloadConditionsEndToEndTests {
    /// Reports cellular for the first `cellularChecks` looks, then Wi-Fi.
    final class ScriptedDevice: DeviceStatusProvider {
        let cellularChecks: Int
        let freeSpace: Int64
        let checks = Mutex(0)

        init(cellularChecks: Int, freeSpace: Int64 = 1 << 40) {
            self.cellularChecks = cellularChecks
            self.freeSpace = freeSpace
        }

        func status(for directory: URL) -> DeviceStatus {
            let check = checks.withLock { count in
                count += 1
                return count
            }
            return DeviceStatus(isOnCellular: check <= cellularChecks, isNetworkMetered: check <= cellularChecks, freeSpace: freeSpace)
        }
    }

    func downloader(_ device: ScriptedDevice) throws -> (PublishedModel, ModelDownloader) {
        let published = try PublishedModel()
        return (published, try published.downloader { $0.deviceStatus = device })
    }

    @Test func cellularDownloadFailsAtOnceWhenNotAllowed() async throws {
        let (published, downloader) = try downloader(ScriptedDevice(cellularChecks: .max))
        defer { withExtendedLifetime(published) {} }
        var conditions = DownloadConditions()
        conditions.allowsCellularAccess = false
        await #expect(throws: DepotError(.conditionsNotMet, "'flowers' v1 was not downloaded: the device is on cellular and cellular downloads are not allowed. No model is installed yet.")) {
            try await downloader.model(named: "flowers", conditions: conditions)
        }
        #expect(await downloader.latestModelFilePath("flowers") == nil)
    }

    @Test func downloadWaitsUntilConditionsHold() async throws {
        let device = ScriptedDevice(cellularChecks: 3)
        let (published, downloader) = try downloader(device)
        defer { withExtendedLifetime(published) {} }
        var conditions = DownloadConditions()
        conditions.requiresUnmeteredNetwork = true
        conditions.waitsUpTo = .seconds(30)
        conditions.pollInterval = .milliseconds(10)
        let model = try await downloader.model(named: "flowers", conditions: conditions)
        #expect(model.version == 1)
        #expect(device.checks.withLock { $0 } == 4)
    }

    @Test func notEnoughSpaceFailsClearlyAndWritesNothing() async throws {
        let (published, downloader) = try downloader(ScriptedDevice(cellularChecks: 0, freeSpace: 500))
        await #expect(throws: DepotError(.notEnoughSpace, "Downloading 'flowers' v1 needs 992 free bytes (992 for the file, 0 to keep free); 500 are free. Nothing was written. No model is installed yet.")) {
            try await downloader.model(named: "flowers")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: published.cache.appendingPathComponent("partial").path).isEmpty)
    }
}
