import Foundation
import ModelDepot
import ModelDepotShared
import Synchronization
import TestSupport
import Testing

/// Events and notifications, in order, from a real download; background updates.
@Suite struct DownloadEventsEndToEndTests {
    final class Notifications: Sendable {
        let received = Mutex<[Notification.Name]>([])
        let center = NotificationCenter()

        init() {
            for name in [Notification.Name.modelDownloadDidSucceed, .modelDownloadDidFail] {
                _ = center.addObserver(forName: name, object: nil, queue: nil) { [unowned self] note in
                    self.received.withLock { $0.append(note.name) }
                }
            }
        }
    }

    func setUp(_ notifications: Notifications) async throws -> (PublishedModel, ModelDownloader) {
        let published = try await PublishedModel()
        return (published, try published.downloader { $0.notificationCenter = notifications.center })
    }

    @Test func firstDownloadReportsEveryStepInOrder() async throws {
        let notifications = Notifications()
        let (published, downloader) = try await setUp(notifications)
        defer { withExtendedLifetime(published) {} }
        let events = await downloader.events()
        _ = try await downloader.model(named: "flowers")
        _ = try await downloader.model(named: "flowers")
        let name = try ModelName("flowers")
        var seen: [ModelDownloadEvent] = []
        for await event in events {
            seen.append(event)
            if seen.count == 8 { break }
        }
        #expect(
            seen == [
                .checking(model: name), .downloading(model: name, version: 1, bytes: 0, total: 992),
                .downloading(model: name, version: 1, bytes: 992, total: 992),
                .downloaded(model: name, version: 1, patched: 0, fetched: 992, saved: 0), .verifying(model: name, version: 1),
                .installed(model: name, version: 1), .checking(model: name), .upToDate(model: name, version: 1),
            ])
        #expect(notifications.received.withLock { $0 } == [.modelDownloadDidSucceed])
    }

    @Test func backgroundUpdateReturnsTheCurrentModelAndInstallsTheNewOne() async throws {
        let notifications = Notifications()
        let (published, downloader) = try await setUp(notifications)
        let server = published.server
        let first = try await downloader.model(named: "flowers")
        try await Command.depot(["upload", "flowers", Binaries.fixture("int8_conv"), "--publish"], environment: server.environment)
            .succeeded()

        let events = await downloader.events()
        let now = try await downloader.model(named: "flowers", policy: .localModelUpdateInBackground)
        #expect(now.fileURL == first.fileURL)
        for await event in events {
            if event.kind == .installed {
                #expect(event.version == 2)
                break
            }
            if event.kind == .failed {
                Issue.record("background update failed: \(event)")
                break
            }
        }
        #expect(try await downloader.model(named: "flowers", policy: .localModel).version == 2)
    }

    @Test func failureIsReportedAsEventAndNotification() async throws {
        let notifications = Notifications()
        let (published, downloader) = try await setUp(notifications)
        let server = published.server
        let version = try await Command.depot(
            ["upload", "flowers", Binaries.fixture("int8_conv"), "--publish", "--json"],
            environment: server.environment
        ).decode(ModelVersion.self)
        let blob = server.storage.appendingPathComponent("blobs/sha256/\(version.sha256.prefix(2))/\(version.sha256)")
        var bytes = try Data(contentsOf: blob)
        bytes[10] ^= 0xff
        try bytes.write(to: blob)

        let events = await downloader.events()
        let refused = await #expect(throws: DepotError.self) { try await downloader.model(named: "flowers") }
        #expect(refused?.code == .internalError)
        var reported: DepotError.Code?
        for await event in events {
            if event.kind == .failed {
                reported = event.error?.code
                break
            }
        }
        #expect(reported == .internalError, "the failed event names the server's refusal of the changed file")
        #expect(notifications.received.withLock { $0 } == [.modelDownloadDidFail])
    }
}
