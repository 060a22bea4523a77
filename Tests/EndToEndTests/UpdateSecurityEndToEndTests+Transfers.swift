import Foundation
import ModelDepot
import ModelDepotShared
import TestSupport
import Testing

/// Transfers that stall, crawl or break off: each ends with a clear error, the current model
/// stays, and the download resumes from its partial file.
extension UpdateSecurityEndToEndTests {
    @Test func associatedFilesPastTheAppsCeilingAreRefused() async throws {
        try await withDevice { device in
            // The server took the model (its ceiling is 256 MiB); this app allows 8 bytes of labels.
            let v2 = try await device.publish("float_classifier_labels")
            let strict = try device.downloader { $0.verificationPolicy = TFLiteVerificationPolicy(maximumAssociatedFilesSize: 8) }
            try await expectRefused(
                device, .associatedFilesTooLarge, keeping: 1,
                saying: "inflate to more than the 8 bytes accepted", using: strict)
            #expect(try await device.downloader.model(named: "flowers").sha256 == v2.sha256)
        }
    }

    @Test func aStalledDownloadFailsAtTheStallTimeoutAndResumesLater() async throws {
        try await withDevice { device in
            let v2 = try await device.publish("float_classifier_labels")
            let blob = "/v1/blobs/sha256/\(v2.sha256)"
            let patient = try device.downloader {
                $0.downloadChunkSize = 400
                // Long enough that a loaded test machine does not stall the manifest or a range that
                // passes (a CI run once saw the first range wait more than 10 s for both cores).
                $0.stallTimeout = .seconds(30)
            }
            device.proxy.hold(blob, after: 1)
            try await expectRefused(device, .transferStalled, keeping: 1, saying: "It resumes from byte 400 next time.", using: patient)
            let partial = device.published.cache.appendingPathComponent("partial/\(v2.sha256).part")
            #expect(
                (try FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? NSNumber)?.intValue == 400,
                "the range that arrived before the stall is kept")

            device.proxy.release(held: blob)
            let events = await patient.events()
            #expect(try await patient.model(named: "flowers").sha256 == v2.sha256)
            var resumedAt: Int?
            for await event in events {
                guard event.kind == .downloading else { continue }
                resumedAt = event.bytes
                break
            }
            #expect(resumedAt == 400, "the download started again from byte \(String(describing: resumedAt)), not from the partial file")
        }
    }

    @Test func aRangeThatWentSilentWhileTheAppWasSuspendedIsTriedAgainNotFailed() async throws {
        /// The app was suspended while a range hung: it has come back to the foreground once
        /// since the proxy began holding the request.
        final class SuspendedDuringTheHold: DeviceStatusProvider {
            let proxy: AttackerProxy
            let blob: String
            init(_ proxy: AttackerProxy, _ blob: String) { (self.proxy, self.blob) = (proxy, blob) }
            func status(for directory: URL) -> DeviceStatus {
                DeviceStatus(activations: proxy.isHolding(blob) ? 1 : 0, freeSpace: 1 << 40)
            }
        }
        try await withDevice { device in
            let v2 = try await device.publish("float_classifier_labels")
            let blob = "/v1/blobs/sha256/\(v2.sha256)"
            let resumed = try device.downloader {
                $0.downloadChunkSize = 400
                // Long enough that a loaded test machine does not stall the manifest or a range that
                // passes (a CI run once saw the first range wait more than 10 s for both cores).
                $0.stallTimeout = .seconds(30)
                $0.retries = 0
                $0.deviceStatus = SuspendedDuringTheHold(device.proxy, blob)
            }
            // The second range hangs for good; the ranges after it pass.
            device.proxy.hold(blob, after: 1, once: true)
            defer { device.proxy.release(held: blob) }  // the proxy stops only once no request is held
            let model = try await resumed.model(named: "flowers")
            #expect(model.sha256 == v2.sha256, "the silent range was asked for again, without a retry left, and the download finished")
            #expect(device.proxy.isHolding(blob), "the hung request was never answered: the range came from a second request")
        }
    }

    @Test func aDownloadSlowerThanTheMinimumRateFails() async throws {
        try await withDevice { device in
            let v2 = try await device.publish("float_classifier_labels")
            let blob = "/v1/blobs/sha256/\(v2.sha256)"
            let file = try Data(contentsOf: URL(fileURLWithPath: Binaries.fixture("float_classifier_labels")))
            // 10 bytes every 100 ms: 100 bytes/s, where the app wants 1,000 on average over 2 seconds.
            device.proxy.take(
                blob,
                .drip(
                    status: .partialContent, headers: ["Content-Range": "bytes 0-\(v2.size - 1)/\(v2.size)"],
                    body: file, piece: 10, interval: .milliseconds(100)))
            let demanding = try device.downloader {
                $0.minimumTransferRate = TransferRate(bytesPerSecond: 1000, window: .seconds(2))
                $0.stallTimeout = .seconds(30)
            }
            try await expectRefused(device, .transferTooSlow, keeping: 1, saying: "below the minimum of 1000 bytes/s", using: demanding)
            #expect(device.proxy.lastHeaders(blob) != nil, "the slow answer was delivered")
        }
    }

    @Test func aServerThatClosesAfterTheHeadersIsAnInterruptedDownload() async throws {
        try await withDevice { device in
            let v2 = try await device.publish("float_classifier_labels")
            let blob = "/v1/blobs/sha256/\(v2.sha256)"
            device.proxy.take(
                blob,
                .closeAfterHead(
                    status: .partialContent,
                    headers: [
                        "Content-Range": "bytes 0-\(v2.size - 1)/\(v2.size)", "Content-Length": "\(v2.size)",
                    ]))
            try await expectRefused(device, .unavailable, keeping: 1, saying: "was interrupted")
            #expect(device.proxy.lastHeaders(blob) != nil, "the broken answer was delivered")
            device.proxy.release(blob)
            #expect(try await device.downloader.model(named: "flowers").sha256 == v2.sha256)
        }
    }
}
