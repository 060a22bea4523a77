import Logging
import ServiceLifecycle

/// Reviews every running guarded rollout each interval (on one replica at a time), moving them
/// and posting their webhooks.
struct GuardReviewLoop: Service {
    let service: RolloutGuardService
    let interval: Duration
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            guard !Task.isShuttingDownGracefully, !Task.isCancelled else { return }
            do {
                try await service.reviewAll()
            } catch {
                logger.error("could not review guarded rollouts; trying again at the next interval", metadata: ["error": "\(error)"])
            }
        }
    }
}
