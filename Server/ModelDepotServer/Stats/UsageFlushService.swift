import Logging
import ServiceLifecycle

/// Writes the usage counts every `interval`, and once more when the server shuts down.
struct UsageFlushService: Service {
    let usage: UsageCounter
    let catalog: any ModelCatalog
    let interval: Duration
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            do {
                try await usage.flush(to: catalog)
            } catch {
                logger.error("could not write usage counts; keeping them for the next attempt", metadata: ["error": "\(error)"])
            }
        }
    }
}
