import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How the SDK talks HTTP: small enough to replace in tests or with another client. Every call
/// has a byte limit: a response body longer than it is cut off and fails with
/// ``TransferLimitExceeded``, so a hostile server cannot feed the device endless data.
public protocol ModelTransport: Sendable {
    /// Sends a request whose answer is small (a manifest, a root document); a `304` comes back as is.
    func data(for request: URLRequest, limit: Int) async throws -> (Data, HTTPURLResponse)
    /// Downloads a body to a temporary file that the caller moves or deletes.
    func download(_ request: URLRequest, limit: Int) async throws -> (URL, HTTPURLResponse)
}

/// A response body went past the limit of its request; reading stopped there.
public struct TransferLimitExceeded: Error, Sendable {
    /// The limit, in bytes.
    public let limit: Int
}

/// ``ModelTransport`` over `URLSession` (FoundationNetworking on Linux): download tasks that are
/// cancelled as soon as a body passes its limit.
public struct URLSessionTransport: ModelTransport {
    let configuration: URLSessionConfiguration

    /// Creates a transport.
    /// - Parameter configuration: The sessions' configuration; ephemeral by default (ETags are
    ///   managed by the SDK).
    public init(configuration: URLSessionConfiguration = .ephemeral) {
        self.configuration = configuration
    }

    public func data(for request: URLRequest, limit: Int) async throws -> (Data, HTTPURLResponse) {
        let (file, response) = try await download(request, limit: limit)
        defer { try? FileManager.default.removeItem(at: file) }
        return (try Data(contentsOf: file), response)
    }

    public func download(_ request: URLRequest, limit: Int) async throws -> (URL, HTTPURLResponse) {
        let transfer = LimitedDownload(limit: limit)
        let session = URLSession(configuration: configuration, delegate: transfer, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let task = session.downloadTask(with: request)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.start(task, continuation)
            }
        } onCancel: {
            task.cancel()
        }
    }
}

/// One download task's delegate: moves the body out of URLSession's temporary file and cancels
/// the task once more than `limit` bytes arrived (or were announced).
private final class LimitedDownload: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: the mutable state is guarded by `lock`.
    private let limit: Int
    private let lock = NSLock()
    private var continuation: CheckedContinuation<(URL, HTTPURLResponse), any Error>?
    private var file: URL?
    private var exceeded = false

    init(limit: Int) { self.limit = limit }

    func start(_ task: URLSessionDownloadTask, _ continuation: CheckedContinuation<(URL, HTTPURLResponse), any Error>) {
        lock.withLock { self.continuation = continuation }
        task.resume()
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        guard totalBytesWritten > limit || totalBytesExpectedToWrite > limit else { return }
        lock.withLock { exceeded = true }
        downloadTask.cancel()
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("modeldepot-\(UUID().uuidString).body")
        if (try? FileManager.default.moveItem(at: location, to: destination)) != nil {
            lock.withLock { file = destination }
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (continuation, file, exceeded) = lock.withLock { () -> (CheckedContinuation<(URL, HTTPURLResponse), any Error>?, URL?, Bool) in
            defer { self.continuation = nil }
            return (self.continuation, self.file, self.exceeded)
        }
        let size = file.flatMap { (try? FileManager.default.attributesOfItem(atPath: $0.path)[.size] as? NSNumber)?.intValue } ?? 0
        if exceeded || size > limit {
            if let file { try? FileManager.default.removeItem(at: file) }
            continuation?.resume(throwing: TransferLimitExceeded(limit: limit))
        } else if let error {
            if let file { try? FileManager.default.removeItem(at: file) }
            continuation?.resume(throwing: error)
        } else if let response = task.response as? HTTPURLResponse {
            let body = file ?? FileManager.default.temporaryDirectory.appendingPathComponent("modeldepot-\(UUID().uuidString).body")
            if file == nil { FileManager.default.createFile(atPath: body.path, contents: nil) }
            continuation?.resume(returning: (body, response))
        } else {
            continuation?.resume(throwing: URLError(.badServerResponse))
        }
    }
}
