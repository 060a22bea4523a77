#if canImport(Darwin)
    import Foundation

    /// ``BackgroundDownloadSession`` over a background `URLSession`: download tasks that the system
    /// runs while the app is suspended, and after it was terminated, relaunching the app in the
    /// background to deliver them. It only forwards the session's callbacks to
    /// ``BackgroundDownloads``, where the decisions are made (and tested on every platform).
    ///
    /// Create one per identifier, once, when the app launches (the system delivers a relaunch's
    /// events to the session created with the same identifier):
    ///
    /// ```swift
    /// configuration.backgroundSession = URLBackgroundDownloadSession(identifier: "com.example.app.models")
    /// ```
    public final class URLBackgroundDownloadSession: NSObject, BackgroundDownloadSession, URLSessionDownloadDelegate, @unchecked Sendable {
        // @unchecked: `session` is set in init and only read afterwards; `downloads` is behind its lock.
        public let identifier: String
        private var session: URLSession?
        private let downloads = WeakDownloads()

        /// - Parameters:
        ///   - identifier: The session's identifier, unique to the app (and to its extensions).
        ///   - sharedContainerIdentifier: The app group whose container the session downloads into,
        ///     when an app extension starts downloads.
        public init(identifier: String, sharedContainerIdentifier: String? = nil) {
            self.identifier = identifier
            super.init()
            let configuration = URLSessionConfiguration.background(withIdentifier: identifier)
            configuration.sessionSendsLaunchEvents = true
            configuration.isDiscretionary = false
            configuration.sharedContainerIdentifier = sharedContainerIdentifier
            session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        }

        public func connect(_ downloads: BackgroundDownloads) { self.downloads.set(downloads) }

        public func startDownload(_ request: URLRequest, description: String) {
            guard let task = session?.downloadTask(with: request) else { return }
            task.taskDescription = description
            task.resume()
        }

        public func runningTaskDescriptions() async -> Set<String> {
            guard let session else { return [] }
            return Set(await session.allTasks.filter { $0.state == .running || $0.state == .suspended }.compactMap(\.taskDescription))
        }

        public func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
            downloads.value?.finished(task: downloadTask.taskDescription ?? "", file: location, response: downloadTask.response)
        }

        public func urlSession(
            _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
            totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
        ) {
            let goesOn = downloads.value?.shouldContinue(
                task: downloadTask.taskDescription ?? "", written: totalBytesWritten,
                expected: totalBytesExpectedToWrite)
            if goesOn == false { downloadTask.cancel() }
        }

        public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            guard let error else { return }
            downloads.value?.failed(task: task.taskDescription ?? "", error: error)
        }

        public func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
            downloads.value?.allEventsDelivered()
        }
    }

    /// The downloads a session reports to, held weakly (they hold the session).
    private final class WeakDownloads: @unchecked Sendable {
        // @unchecked: `reference` is read and written only inside `lock`.
        private let lock = NSLock()
        private weak var reference: BackgroundDownloads?
        func set(_ downloads: BackgroundDownloads) { lock.withLock { reference = downloads } }
        var value: BackgroundDownloads? { lock.withLock { reference } }
    }
#endif
