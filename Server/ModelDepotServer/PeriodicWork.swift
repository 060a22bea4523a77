import Logging
import ServiceLifecycle

/// Work the server repeats every `interval` until it shuts down: writing usage counts, pruning
/// outcome batch ids, reviewing guarded rollouts, collecting blobs. A failure is logged and the
/// work tried again at its next turn.
struct PeriodicWork: Service {
    /// Whether the first turn comes at once or after the first interval.
    enum Start { case atOnce, afterInterval }

    let interval: Duration
    let start: Start
    /// Whether the work runs once more when the server shuts down (what it keeps in memory is
    /// written before the process ends).
    let atShutdown: Bool
    /// What a failure means, for the log: "could not write usage counts; keeping them for the next attempt".
    let failure: String
    let logger: Logger
    let work: @Sendable () async throws -> Void

    init(
        every interval: Duration, start: Start = .afterInterval, atShutdown: Bool = false, failure: String, logger: Logger,
        _ work: @escaping @Sendable () async throws -> Void
    ) {
        self.interval = interval
        self.start = start
        self.atShutdown = atShutdown
        self.failure = failure
        self.logger = logger
        self.work = work
    }

    func run() async throws {
        if start == .atOnce { await turn() }
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            guard atShutdown || (!Task.isShuttingDownGracefully && !Task.isCancelled) else { return }
            await turn()
        }
    }

    private func turn() async {
        do {
            try await work()
        } catch {
            logger.error("\(failure)", metadata: ["error": "\(error)"])
        }
    }
}
