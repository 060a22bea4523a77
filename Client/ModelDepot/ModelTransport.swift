import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How the SDK talks HTTP: small enough to replace in tests or with another client.
public protocol ModelTransport: Sendable {
    /// Sends a request whose answer is small (a manifest); a `304` comes back as is.
    func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse)
    /// Downloads a body to a temporary file that the caller moves or deletes.
    func download(_ request: URLRequest) async throws -> (URL, HTTPURLResponse)
}

/// ``ModelTransport`` over `URLSession` (FoundationNetworking on Linux).
public struct URLSessionTransport: ModelTransport {
    let session: URLSession

    /// Creates a transport.
    /// - Parameter session: The session; an ephemeral one by default (ETags are managed by the SDK).
    public init(session: URLSession = URLSession(configuration: .ephemeral)) {
        self.session = session
    }

    public func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return (data, http)
    }

    public func download(_ request: URLRequest) async throws -> (URL, HTTPURLResponse) {
        let (url, response) = try await session.download(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return (url, http)
    }
}
