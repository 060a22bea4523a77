import Foundation
import ModelDepotShared

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How the SDK talks HTTP: small enough to replace in tests or with another client. Every call
/// has ``TransferLimits``: the answer's head is checked before its body is read, a body longer
/// than allowed is cut off (``TransferLimitExceeded``), and a transfer that stalls or crawls is
/// cancelled (``TransferStalled``, ``TransferTooSlow``), so a hostile server or network can
/// neither feed the device endless data nor hold it forever.
///
/// A transport never follows redirects: it returns a `3xx` as it is, and the SDK decides whether
/// to follow it (allowed origins only, never from `https` to `http`, the app key only to the
/// server's own origin).
public protocol ModelTransport: Sendable {
    /// Sends a request whose answer is small (a manifest, a root document); a `304` comes back as is.
    func data(for request: URLRequest, limits: TransferLimits) async throws -> (Data, HTTPURLResponse)
    /// Downloads a body to a temporary file that the caller moves or deletes.
    func download(_ request: URLRequest, limits: TransferLimits) async throws -> (URL, HTTPURLResponse)
}

/// The transport a configuration uses unless told otherwise: ``URLSessionTransport`` on Apple's
/// systems, ``HTTPClientTransport`` on Linux, where FoundationNetworking keeps reading a body it
/// was told to refuse.
public func defaultModelTransport() -> any ModelTransport {
    #if os(Linux)
        HTTPClientTransport()
    #else
        URLSessionTransport()
    #endif
}

/// ``ModelTransport`` over `URLSession` (FoundationNetworking on Linux): data tasks on one session
/// (so connections are reused) whose bytes go into memory (manifests, root documents) or straight
/// into a temporary file through one open handle (blob ranges). A task is cancelled, and its
/// connection closed, as soon as its head is refused, its body passes its limit, or its pace
/// falls below the limits; redirects are returned, not followed.
///
/// Why data tasks: FoundationNetworking's download tasks with a delegate reopen their file for
/// every chunk (6,400 opens for 100 MB, 45% slower here), and its async `download(for:)` cannot
/// be stopped at a byte count. Memory stays bounded by what one request may bring (the SDK asks
/// for 8 MiB ranges). On Linux a refused or cancelled transfer ends at once for the caller, but
/// its task is not cancelled (FoundationNetworking can trap on a cancel, and reads on after one
/// anyway) and reads the rest of its answer: use ``HTTPClientTransport`` there (the default).
public struct URLSessionTransport: ModelTransport {
    private let session: URLSession
    private let transfers: Transfers

    /// Creates a transport.
    /// - Parameter configuration: The session's configuration; ephemeral by default. It is used
    ///   without a `URLCache` (the SDK keeps ETags itself): FoundationNetworking looks a request
    ///   up in the cache on another queue, where a cancel can reach a task that has already left
    ///   its session, and traps.
    public init(configuration: URLSessionConfiguration = .ephemeral) {
        transfers = Transfers()
        let configuration = configuration.copy() as? URLSessionConfiguration ?? configuration
        configuration.urlCache = nil
        session = URLSession(configuration: configuration, delegate: transfers, delegateQueue: nil)
    }

    public func data(for request: URLRequest, limits: TransferLimits) async throws -> (Data, HTTPURLResponse) {
        let (body, response) = try await transfer(request, limits: limits, into: .memory(Data()))
        guard case .memory(let data) = body else { preconditionFailure("a memory transfer ends in memory") }
        return (data, response)
    }

    public func download(_ request: URLRequest, limits: TransferLimits) async throws -> (URL, HTTPURLResponse) {
        let (file, handle) = try Self.temporaryBodyFile()
        let (_, response) = try await transfer(request, limits: limits, into: .file(file, handle))
        return (file, response)
    }

    /// A new empty file for a body, open for writing; the caller moves or deletes it.
    static func temporaryBodyFile() throws -> (URL, FileHandle) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("modeldepot-\(UUID().uuidString).body")
        guard let handle = PrivateFile.create(at: file) else { throw URLError(.cannotCreateFile) }
        return (file, handle)
    }

    private func transfer(_ request: URLRequest, limits: TransferLimits, into body: Transfers.Body) async throws -> (
        Transfers.Body, HTTPURLResponse
    ) {
        let task = session.dataTask(with: request.allowing(limits.network))
        let watchdog = Task { [transfers] in await transfers.watch(task, limits) }
        defer { watchdog.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfers.start(task, Transfers.Transfer(limits: limits, body: body, continuation: continuation, pace: Pace(now: .now)))
            }
        } onCancel: { [transfers] in
            transfers.end(task)
        }
    }
}

/// The session's delegate: per task, checks the head, appends the body to memory (a small answer)
/// or to its file, and cancels the task once its head is refused, more than its limit arrived
/// (or was announced), or its pace broke the limits.
private final class Transfers: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: `running` is guarded by `lock`; a task's callbacks arrive one at a time.
    enum Body {
        case memory(Data)
        case file(URL, FileHandle)
    }

    struct Transfer {
        let limits: TransferLimits
        var body: Body
        let continuation: CheckedContinuation<(Body, HTTPURLResponse), any Error>
        var pace: Pace
        /// Set once the head was accepted.
        var bodyLimit: Int?
        var failure: (any Error)?

        mutating func append(_ data: Data) throws {
            switch body {
            case .memory(var bytes):
                body = .memory(Data())  // released first, so the append below does not copy

                bytes.append(data)
                body = .memory(bytes)
            case .file(_, let handle):
                try handle.write(contentsOf: data)
            }
        }

        /// Closes the file, and removes it unless the transfer succeeded.
        func finish(keeping: Bool) {
            guard case .file(let file, let handle) = body else { return }
            try? handle.close()
            if !keeping { try? FileManager.default.removeItem(at: file) }
        }
    }

    private let lock = NSLock()
    private var running: [Int: Transfer] = [:]

    func start(_ task: URLSessionDataTask, _ transfer: Transfer) {
        lock.withLock { running[task.taskIdentifier] = transfer }
        task.resume()
    }

    /// Checks the transfer's pace every ``TransferLimits/watchdogTick`` until it ends or breaks a limit.
    func watch(_ task: URLSessionDataTask, _ limits: TransferLimits) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: limits.watchdogTick)
            let broken = lock.withLock { () -> Bool in
                guard var transfer = running[task.taskIdentifier], transfer.failure == nil else { return false }
                transfer.failure = transfer.pace.failure(at: .now, limits: transfer.limits)
                running[task.taskIdentifier] = transfer
                return transfer.failure != nil
            }
            if broken { end(task) }
        }
    }

    /// Ends a transfer early, with the failure it recorded (else as cancelled). On Apple platforms
    /// its task is cancelled. FoundationNetworking finishes a cancel on another queue and traps when the
    /// task has completed meanwhile ("a task that in not in the registry"), and it reads on after
    /// a cancel anyway: there the transfer ends here, and its task is left to finish with its
    /// bytes dropped (HTTPClientTransport, Linux's default, closes the connection instead).
    func end(_ task: URLSessionTask) {
        #if canImport(Darwin)
            task.cancel()
        #else
            guard let transfer = lock.withLock({ running.removeValue(forKey: task.taskIdentifier) }) else { return }
            transfer.finish(keeping: false)
            transfer.continuation.resume(throwing: transfer.failure ?? URLError(.cancelled))
        #endif
    }

    /// A redirect is not followed: the task ends with the `3xx` answer, for the SDK to judge.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        completionHandler(accept(response, of: dataTask) ? .allow : .cancel)
    }

    /// Asks the transfer's limits about the head; records the body limit or the refusal.
    private func accept(_ response: URLResponse?, of task: URLSessionTask) -> Bool {
        guard let limits = lock.withLock({ running[task.taskIdentifier]?.limits }) else { return true }
        let decision: Result<Int, any Error> =
            if let http = response as? HTTPURLResponse {
                Result { try limits.body(http) }
            } else {
                .failure(URLError(.badServerResponse))
            }
        return lock.withLock {
            guard var transfer = running[task.taskIdentifier] else { return false }
            switch decision {
            case .success(let limit) where response?.expectedContentLength ?? -1 > limit:
                transfer.failure = TransferLimitExceeded(limit: limit)
            case .success(let limit):
                transfer.bodyLimit = limit
            case .failure(let error):
                transfer.failure = error
            }
            transfer.pace.headArrived(at: .now)
            running[task.taskIdentifier] = transfer
            return transfer.failure == nil
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let keep = lock.withLock { () -> Bool in
            guard var transfer = running[dataTask.taskIdentifier], transfer.failure == nil, let limit = transfer.bodyLimit else {
                return false
            }
            transfer.pace.arrived(data.count, at: .now)
            if transfer.pace.received > limit {
                transfer.failure = TransferLimitExceeded(limit: limit)
            } else {
                do { try transfer.append(data) } catch { transfer.failure = error }
            }
            running[dataTask.taskIdentifier] = transfer
            return transfer.failure == nil
        }
        if !keep { end(dataTask) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        // A redirect that was not followed may end without a head of its own: check it here.
        if error == nil, lock.withLock({ running[task.taskIdentifier]?.bodyLimit == nil && running[task.taskIdentifier]?.failure == nil }) {
            _ = accept(task.response, of: task)
        }
        guard let transfer = lock.withLock({ running.removeValue(forKey: task.taskIdentifier) }) else { return }
        let response = task.response as? HTTPURLResponse
        let failure = transfer.failure ?? error ?? (response == nil ? URLError(.badServerResponse) : nil)
        transfer.finish(keeping: failure == nil)
        if let failure {
            transfer.continuation.resume(throwing: failure)
        } else if let response {
            transfer.continuation.resume(returning: (transfer.body, response))
        }
    }
}
