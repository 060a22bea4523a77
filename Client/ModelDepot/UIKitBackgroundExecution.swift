#if canImport(UIKit) && !os(watchOS)
    import ModelDepotShared
    import UIKit

    /// ``BackgroundExecution`` through `UIApplication.beginBackgroundTask`: the work may go on for the
    /// time the system grants after the app leaves the foreground; when that time runs out the work is
    /// cancelled (a download keeps its partial file) and the task is ended at once, as the system asks.
    public struct UIKitBackgroundExecution: BackgroundExecution {
        /// Creates the strategy.
        public init() {}

        public func run<Result: Sendable>(named name: String, _ work: @escaping @Sendable () async throws -> Result) async throws -> Result
        {
            let (expired, expire) = AsyncStream<Void>.makeStream()
            let task = Locked(UIBackgroundTaskIdentifier.invalid)
            @MainActor func end() {
                let identifier = task.withLock { identifier in
                    defer { identifier = .invalid }
                    return identifier
                }
                if identifier != .invalid { UIApplication.shared.endBackgroundTask(identifier) }
            }
            let identifier = await UIApplication.shared.beginBackgroundTask(withName: name) {
                expire.finish()
                MainActor.assumeIsolated { end() }
            }
            task.withLock { $0 = identifier }
            defer { Task { @MainActor in end() } }
            return try await withThrowingTaskGroup(of: Result?.self) { group in
                group.addTask { try await work() }
                group.addTask {
                    for await _ in expired {}
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let result = first else { throw CancellationError() }
                return result
            }
        }
    }
#endif
