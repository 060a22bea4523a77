import Foundation
import ModelDepotShared

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The downloads a ``BackgroundDownloadSession`` runs for a ``ModelDownloader``, with a ledger
/// that outlives the app's process: for each task, the blob (its SHA-256 and size) and the byte
/// range it brings.
///
/// When a task ends, its file is moved at once (the system deletes it when the callback returns)
/// next to the partial download, and the ledger keeps the answer's status and headers. The
/// downloader takes it from there the next time it downloads that blob: at once when the app was
/// waiting, or after a relaunch, when the app next asks for the model. There the range is checked
/// like any other (status, `Content-Range`, length, origin) before it joins the partial file,
/// and the whole file is verified before it is installed.
public final class BackgroundDownloads: Sendable {
    struct Entry: Codable, Equatable {
        var id: String
        var sha256: String
        var size: Int
        var lowerBound: Int
        var upperBound: Int
        var answer: Answer?
    }

    /// What a finished task brought: where its body was moved, and its head.
    struct Answer: Codable, Equatable {
        var file: String
        var status: Int
        var headers: [String: String]
        var url: String
    }

    private struct State {
        var entries: [Entry]
        var waiters: [String: CheckedContinuation<(URL, HTTPURLResponse), any Error>] = [:]
        var completionHandlers: [@MainActor () -> Void] = []
        var deliveredUnclaimed = false
    }

    /// The most of an error answer's body kept (for its message).
    static let keptErrorBody = 64 << 10

    let session: any BackgroundDownloadSession
    private let ledger: URL
    private let staging: URL
    private let state: Locked<State>

    /// - Parameters:
    ///   - stateDirectory: Where the ledger (`background-downloads.json`) lives.
    ///   - staging: Where finished tasks' files wait to join their partial download.
    /// - Throws: `DepotError` (`storage_unreadable`) when the ledger exists but cannot be read.
    init(session: any BackgroundDownloadSession, stateDirectory: URL, staging: URL) throws(DepotError) {
        self.session = session
        ledger = stateDirectory.appendingPathComponent("background-downloads.json")
        self.staging = staging
        // A ledger that does not decode is dropped: its tasks' files are then not adopted and
        // those ranges are downloaded again.
        let entries = try StoredFile.contents(of: ledger).flatMap { try? JSONDecoder().decode([Entry].self, from: $0) } ?? []
        state = Locked(State(entries: entries))
    }

    /// The tasks the ledger knows, oldest first.
    var entries: [Entry] { state.withLock { $0.entries } }

    /// Brings `range` of the blob `sha256` through the session: the answer a finished task left
    /// for exactly this range, or the task still under way for it, or a new task. Returns the
    /// body's file (the caller moves or deletes it) and the answer's head.
    ///
    /// Cancelling the caller stops the wait, not the task: what it brings is taken next time.
    func download(_ request: URLRequest, sha256: String, size: Int, range: ClosedRange<Int>) async throws -> (URL, HTTPURLResponse) {
        let running = await session.runningTaskDescriptions()
        let (id, isNew) = state.withLock { state -> (String, Bool) in
            let kept = state.entries.first {
                $0.sha256 == sha256 && $0.lowerBound == range.lowerBound && $0.upperBound == range.upperBound
                    && ($0.answer != nil || running.contains($0.id))
            }
            for entry in state.entries where entry.sha256 == sha256 && entry.id != kept?.id { discardFile(of: entry) }
            state.entries.removeAll { $0.sha256 == sha256 && $0.id != kept?.id }
            if let kept {
                save(state.entries)
                return (kept.id, false)
            }
            let entry = Entry(
                id: "modeldepot-\(UUID().uuidString)", sha256: sha256, size: size,
                lowerBound: range.lowerBound, upperBound: range.upperBound)
            state.entries.append(entry)
            save(state.entries)
            return (entry.id, true)
        }
        if isNew { session.startDownload(request, description: id) }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                state.withLock { state in
                    if let index = state.entries.firstIndex(where: { $0.id == id }), let answer = state.entries[index].answer {
                        state.entries.remove(at: index)
                        save(state.entries)
                        continuation.resume(with: Result { try adopted(answer) })
                    } else if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        state.waiters[id] = continuation
                    }
                }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
    }

    /// A task ended with a body: moves it next to the partial download before returning (the
    /// system deletes it afterwards) and hands it to the download waiting for it, or keeps it for
    /// the next. A task the ledger does not know is left to the system.
    public func finished(task description: String, file: URL, response: URLResponse?) {
        state.withLock { state in
            guard let index = state.entries.firstIndex(where: { $0.id == description }) else { return }
            let entry = state.entries[index]
            let staged = staging.appendingPathComponent("\(entry.sha256).\(entry.lowerBound)-\(entry.upperBound).range")
            let result: Result<Answer, any Error> = Result {
                guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
                try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
                try? FileManager.default.removeItem(at: staged)
                try FileManager.default.moveItem(at: file, to: staged)
                if !(200..<300).contains(http.statusCode) { truncate(staged, to: Self.keptErrorBody) }
                var headers: [String: String] = [:]
                for case let (name as String, value as String) in http.allHeaderFields { headers[name] = value }
                return Answer(
                    file: staged.lastPathComponent, status: http.statusCode, headers: headers, url: http.url?.absoluteString ?? "")
            }
            let waiter = state.waiters.removeValue(forKey: description)
            switch result {
            case .success(let answer) where waiter == nil:
                state.entries[index].answer = answer
            case .success(let answer):
                state.entries.remove(at: index)
                waiter?.resume(with: Result { try adopted(answer) })
            case .failure(let error):
                state.entries.remove(at: index)
                waiter?.resume(throwing: error)
            }
            save(state.entries)
        }
    }

    /// A task ended without a body (a network error, or cancelled): the download waiting for it
    /// gets the error; without one, the ledger forgets the task and that range is asked for again.
    public func failed(task description: String, error: any Error) {
        state.withLock { state in
            guard let index = state.entries.firstIndex(where: { $0.id == description }) else { return }
            state.entries.remove(at: index)
            save(state.entries)
            state.waiters.removeValue(forKey: description)?.resume(throwing: error)
        }
    }

    /// Whether a task may go on, told as its bytes arrive: not once more arrived, or were
    /// announced, than the whole blob (a hostile or broken server would otherwise fill the
    /// device's storage), nor when the ledger does not know it. `expected` is negative when unknown.
    public func shouldContinue(task description: String, written: Int64, expected: Int64) -> Bool {
        guard let entry = state.withLock({ state in state.entries.first { $0.id == description } }) else { return false }
        return written <= Int64(entry.size) && expected <= Int64(entry.size)
    }

    /// The system delivered every event it held for the session: calls the completion handler the
    /// app handed over in ``ModelDownloader/handleEventsForBackgroundURLSession(identifier:completionHandler:)``
    /// on the main actor (or calls it as soon as it is handed over).
    public func allEventsDelivered() {
        let handlers = state.withLock { state in
            defer { state.completionHandlers = [] }
            state.deliveredUnclaimed = state.completionHandlers.isEmpty
            return state.completionHandlers
        }
        Task { @MainActor in handlers.forEach { $0() } }
    }

    /// Keeps the app's completion handler until the session says it delivered every event.
    func whenEventsDelivered(_ handler: @escaping @MainActor () -> Void) {
        let already = state.withLock { state in
            defer { state.deliveredUnclaimed = false }
            if !state.deliveredUnclaimed { state.completionHandlers.append(handler) }
            return state.deliveredUnclaimed
        }
        if already { Task { @MainActor in handler() } }
    }

    /// The kept answer as the downloader reads any other: its body's file and its head.
    private func adopted(_ answer: Answer) throws -> (URL, HTTPURLResponse) {
        guard let url = URL(string: answer.url),
            let response = HTTPURLResponse(url: url, statusCode: answer.status, httpVersion: "HTTP/1.1", headerFields: answer.headers)
        else {
            throw URLError(.badServerResponse)
        }
        return (staging.appendingPathComponent(answer.file), response)
    }

    private func discardFile(of entry: Entry) {
        guard let answer = entry.answer else { return }
        try? FileManager.default.removeItem(at: staging.appendingPathComponent(answer.file))
    }

    /// Losing the ledger costs a download again, never a wrong byte: a write that fails is not an error.
    private func save(_ entries: [Entry]) {
        guard let data = try? JSONEncoder().encode(entries) else { return }
        try? StoredFile.write(data, to: ledger)
    }

    private func truncate(_ file: URL, to length: Int) {
        guard let handle = try? FileHandle(forWritingTo: file) else { return }
        defer { try? handle.close() }
        if (try? handle.seekToEnd()) ?? 0 > UInt64(length) { try? handle.truncate(atOffset: UInt64(length)) }
    }
}
