import Foundation
import Testing

@testable import ModelDepot

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The ledger of a background session's tasks and what it decides about their ends, with the
/// session reduced to what it reports (the transfers themselves are in the end-to-end tests).
@Suite struct BackgroundDownloadsTests {
    /// A session that only records the tasks started; `running` is what the system says it still runs.
    final class QuietSession: BackgroundDownloadSession, @unchecked Sendable {
        let identifier = "com.example.test"
        let running: Set<String>
        private let lock = NSLock()
        private var started: [String] = []
        init(running: Set<String> = []) { self.running = running }
        var descriptions: [String] { lock.withLock { started } }
        func connect(_ downloads: BackgroundDownloads) {}
        func startDownload(_ request: URLRequest, description: String) { lock.withLock { started.append(description) } }
        func runningTaskDescriptions() async -> Set<String> { running }
    }

    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("background-\(UUID().uuidString)")
    let sha = String(repeating: "ab", count: 32)
    let request = URLRequest(url: URL(string: "https://models.example.com/v1/blobs/sha256/\(String(repeating: "ab", count: 32))")!)

    func downloads(_ session: QuietSession) throws -> BackgroundDownloads {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return try BackgroundDownloads(session: session, stateDirectory: folder, staging: folder.appendingPathComponent("partial"))
    }

    func answer(_ status: Int, range: String? = nil) -> HTTPURLResponse {
        HTTPURLResponse(
            url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: range.map { ["Content-Range": $0] } ?? [:])!
    }

    func body(_ bytes: Int) throws -> URL {
        let file = folder.appendingPathComponent("system-\(UUID().uuidString).tmp")
        try Data(repeating: 7, count: bytes).write(to: file)
        return file
    }

    /// Starts a download and waits until the session was asked for its task; returns the wait and the task.
    func started(_ downloads: BackgroundDownloads, _ session: QuietSession, range: ClosedRange<Int>)
        async throws -> (Task<(URL, HTTPURLResponse), any Error>, String)
    {
        let before = session.descriptions.count
        let wait = Task { try await downloads.download(request, sha256: sha, size: 1_000, range: range) }
        while session.descriptions.count == before { await Task.yield() }
        return (wait, try #require(session.descriptions.last))
    }

    @Test func aTaskThatEndsAfterTheAppWentIsAdoptedByTheNextLaunchOnce() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let session = QuietSession()
        let first = try downloads(session)
        let (wait, id) = try await started(first, session, range: 400...999)
        wait.cancel()
        await #expect(throws: CancellationError.self) { try await wait.value }
        #expect(first.entries.map(\.id) == [id], "cancelling the wait leaves the task to the system")

        // The relaunched app's downloads read the ledger; the system delivers the task's end.
        let relaunched = QuietSession(running: [id])
        let second = try downloads(relaunched)
        let delivered = try body(600)
        second.finished(task: id, file: delivered, response: answer(206, range: "bytes 400-999/1000"))
        #expect(!FileManager.default.fileExists(atPath: delivered.path), "the system's file was moved before the callback returned")
        #expect(try downloads(QuietSession()).entries.first?.answer?.status == 206, "the answer is in the ledger on disk")

        let (file, response) = try await second.download(request, sha256: sha, size: 1_000, range: 400...999)
        #expect(relaunched.descriptions.isEmpty, "no new task")
        #expect(response.statusCode == 206 && response.value(forHTTPHeaderField: "Content-Range") == "bytes 400-999/1000")
        #expect(try Data(contentsOf: file) == Data(repeating: 7, count: 600))
        #expect(try second.entries.isEmpty && downloads(QuietSession()).entries.isEmpty, "adopted once, then forgotten")
    }

    @Test func aTaskTheSystemLostOrForAnotherRangeIsAskedForAgain() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let session = QuietSession()
        let first = try downloads(session)
        let (lost, lostID) = try await started(first, session, range: 0...999)
        lost.cancel()
        _ = await lost.result
        let (other, otherID) = try await started(first, session, range: 0...999)
        #expect(otherID != lostID, "a task the system no longer runs is started again")
        other.cancel()
        _ = await other.result
        first.finished(task: otherID, file: try body(1_000), response: answer(206, range: "bytes 0-999/1000"))
        let staged = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("partial").path).first)

        // The partial file grew meanwhile (in the app): the answer for bytes 0-999 is not this range's.
        let (third, thirdID) = try await started(first, session, range: 500...999)
        #expect(thirdID != otherID && first.entries.map(\.id) == [thirdID])
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("partial/\(staged)").path), "its file was removed")
        first.failed(task: thirdID, error: URLError(.networkConnectionLost))
        await #expect(throws: URLError.self) { try await third.value }
        #expect(first.entries.isEmpty)
    }

    @Test func aTaskMayNotBringMoreThanTheWholeFile() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let session = QuietSession()
        let downloads = try downloads(session)
        let (wait, id) = try await started(downloads, session, range: 0...999)
        #expect(downloads.shouldContinue(task: id, written: 1_000, expected: -1))
        #expect(downloads.shouldContinue(task: id, written: 10, expected: 1_000))
        #expect(!downloads.shouldContinue(task: id, written: 1_001, expected: -1))
        #expect(!downloads.shouldContinue(task: id, written: 10, expected: 1_001))
        #expect(!downloads.shouldContinue(task: "com.example.unknown", written: 0, expected: -1), "a task the ledger does not know")

        downloads.finished(task: id, file: try body(1 << 20), response: answer(503))
        let (file, response) = try await wait.value
        #expect(
            try response.statusCode == 503 && Data(contentsOf: file).count == BackgroundDownloads.keptErrorBody,
            "an error's body is cut to what its message needs")
        let unknown = try body(10)
        downloads.finished(task: "com.example.unknown", file: unknown, response: answer(200))
        #expect(FileManager.default.fileExists(atPath: unknown.path), "a task the ledger does not know is left to the system")
    }

    @MainActor final class Calls {
        var count = 0
    }

    @Test(arguments: [false, true])
    func theSystemsCompletionHandlerIsCalledOnceEverythingWasDelivered(deliveredFirst: Bool) async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let downloads = try downloads(QuietSession())
        let calls = Calls()
        let (called, signal) = AsyncStream<Void>.makeStream()
        let handler: @MainActor () -> Void = {
            calls.count += 1
            signal.yield()
        }
        if deliveredFirst {
            downloads.allEventsDelivered()
            downloads.whenEventsDelivered(handler)
        } else {
            downloads.whenEventsDelivered(handler)
            await MainActor.run {}
            #expect(await calls.count == 0, "not before the session said so")
            downloads.allEventsDelivered()
        }
        var iterator = called.makeAsyncIterator()
        _ = await iterator.next()
        downloads.allEventsDelivered()
        await MainActor.run {}
        #expect(await calls.count == 1)
    }
}
