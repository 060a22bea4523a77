import Hummingbird
import ModelDepotShared
import NIOCore

/// Per-request state: Hummingbird's core storage and the key that authenticated the request.
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The key the request authenticated with; set by ``AuthenticationMiddleware``.
    public var principal: AccessKey?
    /// The event loop of the request's connection (`nil` under the router tester).
    let eventLoop: (any EventLoop)?
    /// The IP address of the client (`nil` under the router tester).
    let clientAddress: String?

    public init(source: Source) {
        coreContext = .init(source: source)
        principal = nil
        let channel = (source as? ApplicationRequestContextSource)?.channel
        eventLoop = channel?.eventLoop
        clientAddress = channel?.remoteAddress?.ipAddress
    }

    /// The authenticated key; routes behind the authentication middleware always have one.
    func requirePrincipal() throws -> AccessKey {
        guard let principal else {
            throw DepotError(.unauthorized, "This route needs an API key: send 'Authorization: Bearer <secret>'.")
        }
        return principal
    }
}
