import Hummingbird
import ModelDepotShared
import NIOCore
import Synchronization

/// Per-request state: Hummingbird's core storage and the key that authenticated the request.
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The key the request authenticated with; set by ``AuthenticationMiddleware`` and the
    /// console. Every copy of the context shares it, so the request log sees it too.
    public var principal: AccessKey? {
        get { authenticated.withLock { $0 } }
        nonmutating set { authenticated.withLock { $0 = newValue } }
    }
    private let authenticated = Authenticated()
    /// The request's connection (under the router tester, a testing channel without a peer).
    let channel: any Channel
    /// The event loop of the request's connection.
    var eventLoop: any EventLoop { channel.eventLoop }
    /// The IP address of the connection's peer: the client, or a proxy (`nil` without a peer
    /// address, as under the router tester).
    let peerAddress: String?

    public init(source: Source) {
        coreContext = .init(source: source)
        channel = source.channel
        peerAddress = channel.remoteAddress?.ipAddress
    }

    /// The trailer fields that ended the request's chunked body, once the body has been read
    /// (`nil` when it had none, and on a connection without ``RequestProgressReporter``, as
    /// under the router tester).
    func requestTrailers() async throws -> HTTPFields? {
        try await channel.eventLoop.submit { [channel] in
            (try? channel.pipeline.syncOperations.handler(type: RequestProgressReporter.self))?.trailers
        }.get()
    }

    /// Where the request comes from: the peer, or what a trusted proxy says of the client.
    func client(of request: Request, through proxies: TrustedProxies) -> TrustedProxies.Client {
        proxies.client(
            peer: peerAddress, forwardedFor: request.headers[values: .xForwardedFor].joined(separator: ","),
            forwardedProto: request.headers[.xForwardedProto])
    }

    /// The authenticated key; routes behind the authentication middleware always have one.
    func requirePrincipal() throws -> AccessKey {
        guard let principal else {
            throw DepotError(.unauthorized, "This route needs an API key: send 'Authorization: Bearer <secret>'.")
        }
        return principal
    }
}

/// The key a request authenticated with, shared by every copy of its context.
private final class Authenticated: Sendable {
    private let key = Mutex<AccessKey?>(nil)

    func withLock<T>(_ body: (inout AccessKey?) -> T) -> T { key.withLock { body(&$0) } }
}
