import Hummingbird
import ModelDepotShared
import NIOCore

/// Per-request state: Hummingbird's core storage and the key that authenticated the request.
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The key the request authenticated with; set by ``AuthenticationMiddleware``.
    public var principal: AccessKey?
    /// The request's connection (`nil` under the router tester).
    let channel: (any Channel)?
    /// The event loop of the request's connection (`nil` under the router tester).
    let eventLoop: (any EventLoop)?
    /// The IP address of the client (`nil` under the router tester).
    let clientAddress: String?

    public init(source: Source) {
        coreContext = .init(source: source)
        principal = nil
        channel = (source as? ApplicationRequestContextSource)?.channel
        eventLoop = channel?.eventLoop
        clientAddress = channel?.remoteAddress?.ipAddress
    }

    /// The trailer fields that ended the request's chunked body, once the body has been read
    /// (`nil` when it had none, and on a connection without ``RequestProgressReporter``, as
    /// under the router tester).
    func requestTrailers() async throws -> HTTPFields? {
        guard let channel else { return nil }
        return try await channel.eventLoop.submit {
            (try? channel.pipeline.syncOperations.handler(type: RequestProgressReporter.self))?.trailers
        }.get()
    }

    /// The authenticated key; routes behind the authentication middleware always have one.
    func requirePrincipal() throws -> AccessKey {
        guard let principal else {
            throw DepotError(.unauthorized, "This route needs an API key: send 'Authorization: Bearer <secret>'.")
        }
        return principal
    }
}
