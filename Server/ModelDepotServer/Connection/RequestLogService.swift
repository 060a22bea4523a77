import ServiceLifecycle

/// Writes the request log's gathered lines every `interval`, on a task of its own (never on an
/// event loop), and what is left once the server has stopped answering.
struct RequestLogService: Service {
    let log: RequestLog
    var interval: Duration = .milliseconds(100)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                log.flush()
            }
        }
        log.flush()
    }
}
