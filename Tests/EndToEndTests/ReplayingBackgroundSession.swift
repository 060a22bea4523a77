import Foundation
import ModelDepot

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the system does with a background `URLSession`, played by the test (no such session
/// exists off Apple platforms): it keeps the download tasks the app started, across a relaunch
/// too (``relaunched()``); when told to (``deliver(tamper:from:)``) it performs each for real over
/// HTTP with the SDK's own HTTP client and hands the downloads each end, then says it delivered
/// everything.
final class ReplayingBackgroundSession: BackgroundDownloadSession, @unchecked Sendable {
    // @unchecked: `pending`, `startedHere` and `downloads` are read and written only inside `lock`.
    struct Started: Sendable {
        var request: URLRequest
        var description: String
    }

    let identifier: String
    private let lock = NSLock()
    private var pending: [Started]
    private var startedHere: [Started] = []
    private weak var downloads: BackgroundDownloads?
    private let starts: AsyncStream<Started>
    private let started: AsyncStream<Started>.Continuation

    init(identifier: String = "com.example.app.models", pending: [Started] = []) {
        self.identifier = identifier
        self.pending = pending
        (starts, started) = AsyncStream.makeStream()
    }

    /// The session a relaunched app creates with the same identifier: the system still holds the
    /// tasks the app had started; the new app has started none.
    func relaunched() -> ReplayingBackgroundSession {
        ReplayingBackgroundSession(identifier: identifier, pending: lock.withLock { pending })
    }

    /// The tasks this app started, in order.
    var tasksStarted: [Started] { lock.withLock { startedHere } }

    /// The next task the app starts (waits for it).
    func nextStart() async -> Started? {
        var iterator = starts.makeAsyncIterator()
        return await iterator.next()
    }

    func connect(_ downloads: BackgroundDownloads) { lock.withLock { self.downloads = downloads } }

    func startDownload(_ request: URLRequest, description: String) {
        let task = Started(request: request, description: description)
        lock.withLock {
            pending.append(task)
            startedHere.append(task)
        }
        started.yield(task)
    }

    func runningTaskDescriptions() async -> Set<String> { Set(lock.withLock { pending.map(\.description) }) }

    /// Performs every pending task, reports each end (its file changed by `tamper` first; its
    /// answer as coming from `source`, as after a redirect the system followed), then that every
    /// event was delivered.
    func deliver(tamper: (URL) throws -> Void = { _ in }, from source: URL? = nil) async throws {
        let tasks = lock.withLock {
            defer { pending = [] }
            return pending
        }
        let downloads = lock.withLock { self.downloads }
        for task in tasks {
            let (file, response) = try await HTTPClientTransport().download(task.request, limits: TransferLimits(maximumBytes: 1 << 30))
            try tamper(file)
            let answer =
                source.flatMap {
                    HTTPURLResponse(
                        url: $0, statusCode: response.statusCode, httpVersion: "HTTP/1.1",
                        headerFields: response.allHeaderFields as? [String: String])
                } ?? response
            downloads?.finished(task: task.description, file: file, response: answer)
        }
        downloads?.allEventsDelivered()
    }
}
