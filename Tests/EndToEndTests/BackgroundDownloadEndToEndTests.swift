import Crypto
import Foundation
import ModelDepot
import ModelDepotShared
import Testing

/// Downloads through a background session (the system's, played by ``ReplayingBackgroundSession``)
/// against a real server: the task outlives the app, its bytes are checked like any range and
/// the file verified before it is installed.
@Suite struct BackgroundDownloadEndToEndTests {
    static var background: DownloadConditions {
        var conditions = DownloadConditions()
        conditions.allowsBackgroundDownloading = true
        return conditions
    }

    static var publishedSHA256: String {
        get throws {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: Binaries.fixture("float_classifier")))
            return SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        }
    }

    /// A published model, a downloader with a background session, and a call for the model
    /// (allowed in the background) waiting on the task it handed to the session.
    static func downloadHandedToTheSession() async throws -> (
        PublishedModel, ReplayingBackgroundSession, ModelDownloader,
        Task<VerifiedModel, any Error>, ReplayingBackgroundSession.Started
    ) {
        let published = try await PublishedModel()
        let session = ReplayingBackgroundSession()
        let downloader = try published.downloader { $0.backgroundSession = session }
        let waiting = Task { try await downloader.model(named: "flowers", conditions: background) }
        return (published, session, downloader, waiting, try #require(await session.nextStart()))
    }

    @Test func aDownloadTheAppWasTerminatedDuringIsInstalledAfterTheRelaunch() async throws {
        let (published, session, _, waiting, task) = try await Self.downloadHandedToTheSession()
        defer { withExtendedLifetime(published) {} }
        let size = try Data(contentsOf: URL(fileURLWithPath: Binaries.fixture("float_classifier"))).count
        #expect(task.request.value(forHTTPHeaderField: "Range") == "bytes=0-\(size - 1)", "the whole file as one task")
        #expect(task.request.value(forHTTPHeaderField: "Authorization") == "Bearer \(published.appKey)")
        #expect(task.request.value(forHTTPHeaderField: "If-Range") == "\"\(try Self.publishedSHA256)\"")
        let ledger = published.cache.appendingPathComponent("background-downloads.json")
        #expect(try String(contentsOf: ledger, encoding: .utf8).contains(task.description), "the ledger is on disk before the app goes")
        // The app's process ends; the system keeps the task.
        waiting.cancel()
        if case .success = await waiting.result { Issue.record("a cancelled wait returned a model") }

        let relaunched = session.relaunched()
        let transport = RecordingTransport()
        let after = try published.downloader {
            $0.backgroundSession = relaunched
            $0.transport = transport
        }
        #expect(
            !after.handleEventsForBackgroundURLSession(identifier: "com.example.another") {
                Issue.record("another session's handler was called")
            })
        let (handled, handler) = AsyncStream<Void>.makeStream()
        #expect(after.handleEventsForBackgroundURLSession(identifier: relaunched.identifier) { handler.yield() })
        try await relaunched.deliver()
        var calls = handled.makeAsyncIterator()
        #expect(await calls.next() != nil, "the system's completion handler was called")

        let model = try await after.model(named: "flowers", conditions: Self.background)
        #expect(model.sha256 == (try Self.publishedSHA256))
        #expect(transport.rangeStarts.isEmpty && relaunched.tasksStarted.isEmpty, "nothing was downloaded again")
        #expect(try Data(contentsOf: ledger) == Data("[]".utf8), "the ledger forgot the task it adopted")
        let partials = try FileManager.default.contentsOfDirectory(atPath: published.cache.appendingPathComponent("partial").path)
        #expect(partials.isEmpty, "no staged or partial file is left: \(partials)")
    }

    @Test func whileTheAppWaitsTheSessionsFileIsCheckedAndInstalled() async throws {
        let (published, session, _, waiting, _) = try await Self.downloadHandedToTheSession()
        defer { withExtendedLifetime(published) {} }
        try await session.deliver()
        #expect(try await waiting.value.sha256 == (try Self.publishedSHA256))
        #expect(session.tasksStarted.count == 1)

        // Conditions that do not allow the background keep the download in the app, range by range.
        let transport = RecordingTransport()
        let inApp = try published.downloader {
            $0.backgroundSession = session
            $0.transport = transport
            $0.cacheDirectory = published.scratch.url.appendingPathComponent("second-cache")
            $0.downloadChunkSize = 300
        }
        _ = try await inApp.model(named: "flowers")
        #expect(session.tasksStarted.count == 1 && transport.rangeStarts.count > 1)
    }

    enum Tampering: String, CaseIterable, Sendable {
        case flippedByte, cut, extended
    }

    @Test(arguments: Tampering.allCases)
    func bytesTheSessionBroughtThatAreNotTheFileAreNeverInstalled(_ tampering: Tampering) async throws {
        let (published, session, downloader, waiting, _) = try await Self.downloadHandedToTheSession()
        defer { withExtendedLifetime(published) {} }
        try await session.deliver(tamper: { file in
            var bytes = try Data(contentsOf: file)
            switch tampering {
            case .flippedByte: bytes[bytes.count / 2] ^= 0xff
            case .cut: bytes.removeLast(10)
            case .extended: bytes.append(contentsOf: [0, 1, 2])
            }
            try bytes.write(to: file)
        })
        let expected: DepotError.Code = tampering == .flippedByte ? .digestMismatch : .sizeMismatch
        await #expect { try await waiting.value } throws: { ($0 as? DepotError)?.code == expected }
        await #expect { try await downloader.model(named: "flowers", policy: .localModel) } throws: {
            ($0 as? DepotError)?.code == .notFound
        }

        // The next attempt asks for the file again rather than taking the same bytes.
        let again = Task { try await downloader.model(named: "flowers", conditions: Self.background) }
        let retry = try #require(await session.nextStart())
        #expect(retry.request.value(forHTTPHeaderField: "Range")?.hasPrefix("bytes=0-") == true)
        try await session.deliver()
        #expect(try await again.value.sha256 == (try Self.publishedSHA256))
    }

    @Test func anAnswerFromAnOriginTheAppDoesNotAllowIsDiscarded() async throws {
        let (published, session, _, waiting, _) = try await Self.downloadHandedToTheSession()
        defer { withExtendedLifetime(published) {} }
        try await session.deliver(from: URL(string: "https://cdn.attacker.example/blob"))
        await #expect { try await waiting.value } throws: { error in
            guard let error = error as? DepotError else { return false }
            return error.code == .originNotAllowed && error.message.contains("cdn.attacker.example")
        }
        let partials = try FileManager.default.contentsOfDirectory(atPath: published.cache.appendingPathComponent("partial").path)
        #expect(partials.isEmpty, "the answer's bytes were discarded: \(partials)")
    }
}
