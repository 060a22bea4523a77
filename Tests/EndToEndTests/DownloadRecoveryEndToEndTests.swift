import Foundation
import ModelDepot
import ModelDepotShared
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Retries, re-resolving a download URL that went away, and cancellation, against a real server.
@Suite struct DownloadRecoveryEndToEndTests {
    /// URLSession with hooks: fail the first range requests (a network blip), fail every range
    /// once some have passed (a connection lost for good mid-download), or change the server's
    /// state right after the manifest arrived.
    final class HookedTransport: ModelTransport, @unchecked Sendable {
        // @unchecked: the counters are only touched by the downloader's actor, one call at a time.
        let real = URLSessionTransport()
        var failingRanges: Int
        /// Ranges that still pass before every later one fails; `nil` never cuts.
        var passingRangesBeforeCut: Int?
        var afterManifest: (() async throws -> Void)?

        init(failingRanges: Int = 0, afterManifest: (() async throws -> Void)? = nil) {
            self.failingRanges = failingRanges
            self.afterManifest = afterManifest
        }

        func data(for request: URLRequest, limits: TransferLimits) async throws -> (Data, HTTPURLResponse) {
            let result = try await real.data(for: request, limits: limits)
            if let hook = afterManifest {
                afterManifest = nil
                try await hook()
            }
            return result
        }

        func download(_ request: URLRequest, limits: TransferLimits) async throws -> (URL, HTTPURLResponse) {
            if failingRanges > 0 {
                failingRanges -= 1
                throw URLError(.networkConnectionLost)
            }
            if let passing = passingRangesBeforeCut {
                guard passing > 0 else { throw URLError(.networkConnectionLost) }
                passingRangesBeforeCut = passing - 1
            }
            return try await real.download(request, limits: limits)
        }
    }

    func setUp(_ transport: HookedTransport, retries: Int = 3) async throws -> (PublishedModel, ModelDownloader) {
        let published = try await PublishedModel()
        return (
            published,
            try published.downloader {
                $0.transport = transport
                $0.retries = retries
                $0.retryDelay = .milliseconds(5)
            }
        )
    }

    @Test func transientFailuresAreRetriedWithBackoff() async throws {
        let (published, downloader) = try await setUp(HookedTransport(failingRanges: 2))
        defer { withExtendedLifetime(published) {} }
        #expect(try await downloader.model(named: "flowers").version == 1)

        let (published2, noRetries) = try await setUp(HookedTransport(failingRanges: 1), retries: 0)
        defer { withExtendedLifetime(published2) {} }
        do {
            _ = try await noRetries.model(named: "flowers")
            Issue.record("a lost connection without retries succeeded")
        } catch let error as DepotError {
            #expect(error.code == .unavailable)
        }
    }

    @Test func downloadURLThatWentAwayIsResolvedAgain() async throws {
        let transport = HookedTransport()
        let (published, downloader) = try await setUp(transport)
        let server = published.server
        transport.afterManifest = {
            // Between the manifest and the download, v2 replaces v1 and v1's file is deleted.
            try await Command.depot(["upload", "flowers", Binaries.fixture("int8_conv"), "--publish"], environment: server.environment)
                .succeeded()
            try await Command.depot(["unpublish", "flowers", "1"], environment: server.environment).succeeded()
            try await Command.depot(["delete-version", "flowers", "1"], environment: server.environment).succeeded()
        }
        let model = try await downloader.model(named: "flowers")
        #expect(model.version == 2)
        #expect(model.description.inputs.first?.type == .int8)
    }

    @Test func cancellingTheCallerStopsTheDownload() async throws {
        let published = try await PublishedModel()
        defer { withExtendedLifetime(published) {} }
        let device = DownloadConditionsEndToEndTests.ScriptedDevice { _, _ in DeviceStatus(isCharging: false, freeSpace: 1 << 40) }
        let downloader = try published.downloader { $0.deviceStatus = device }
        var conditions = DownloadConditions()
        conditions.requiresCharging = true
        conditions.waitsUpTo = .seconds(3_600)
        conditions.pollInterval = .milliseconds(10)
        let task = Task { try await downloader.model(named: "flowers", conditions: conditions) }
        await device.looked(2)  // the download waits for power
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(await downloader.latestModelFilePath("flowers") == nil)
    }
}
