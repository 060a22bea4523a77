import Foundation
import TestSupport
import Testing

/// A real `depot serve` behind nginx (which sends `X-Forwarded-For`): with `--trusted-proxy`, a
/// client that keeps failing to authenticate is throttled by its own address and its neighbours'
/// attempts are not; without it, every client has nginx's address and one client's failures
/// throttle every guess behind it (valid generated keys are never throttled at all:
/// `AuthenticationThrottleEndToEndTests`).
@Suite struct TrustedProxyEndToEndTests {
    struct Result: Equatable {
        let failing: [Int]
        let blocked: Int
        let neighbour: Int
    }

    /// Requests through nginx from two loopback source addresses, each on a connection of its own.
    static func run(trusting: Bool) async throws -> Result {
        let published = try await PublishedModel(arguments: trusting ? ["--trusted-proxy", "127.0.0.1/32"] : [])
        let balancer = try await Balancer(replicas: [published.server], in: published.scratch)
        func get(from source: String, _ secret: String, forwarded: String? = nil) throws -> Int {
            let headers = [("Authorization", "Bearer \(secret)")] + (forwarded.map { [("X-Forwarded-For", $0)] } ?? [])
            return try RawHTTPConnection.get(
                "/v1/models/flowers/manifest", port: balancer.url.port ?? 0, from: source, headers: headers
            ).status
        }
        let failing = try (0..<11).map { _ in try get(from: "127.0.0.20", "wrong", forwarded: "127.0.0.21") }
        return Result(failing: failing, blocked: try get(from: "127.0.0.20", "wrong"), neighbour: try get(from: "127.0.0.21", "wrong"))
    }

    @Test func behindATrustedProxyOneClientsFailuresDoNotThrottleAnother() async throws {
        let result = try await Self.run(trusting: true)
        #expect(result.failing == Array(repeating: 401, count: 11), "10 failures allowed, the 11th starts a backoff")
        #expect(result.blocked == 429, "the failing client waits, by its own address")
        #expect(result.neighbour == 401, "its neighbour, whose address the failing client put in X-Forwarded-For, does not")
    }

    @Test func withoutTrustingTheProxyEveryClientHasItsAddress() async throws {
        let result = try await Self.run(trusting: false)
        #expect(result.blocked == 429)
        #expect(result.neighbour == 429, "one client's failures throttle everyone behind the proxy")
    }
}
