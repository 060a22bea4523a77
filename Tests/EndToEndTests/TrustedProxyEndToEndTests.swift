import Foundation
import TestSupport
import Testing

/// A real `depot serve` behind nginx (which sends `X-Forwarded-For`): with `--trusted-proxy`, a
/// client that keeps failing to authenticate is throttled by its own address and its neighbours
/// go on; without it, every client has nginx's address and one client's failures throttle all.
@Suite struct TrustedProxyEndToEndTests {
    /// Requests through nginx from two loopback source addresses; prints JSON.
    static let script = """
        import http.client, json, sys
        port, good = int(sys.argv[1]), sys.argv[2]
        def get(source, secret, forwarded=None):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
            headers = {"Authorization": "Bearer " + secret}
            if forwarded: headers["X-Forwarded-For"] = forwarded
            connection.request("GET", "/v1/models/flowers/manifest", headers=headers)
            response = connection.getresponse()
            response.read()
            connection.close()
            return response.status
        result = {}
        result["failing"] = [get("127.0.0.20", "wrong", forwarded="127.0.0.21") for _ in range(11)]
        result["blocked"] = get("127.0.0.20", good)
        result["neighbour"] = get("127.0.0.21", good)
        print(json.dumps(result))
        """

    struct Result: Decodable, Equatable {
        let failing: [Int]
        let blocked: Int
        let neighbour: Int
    }

    static func run(trusting: Bool) throws -> Result {
        let published = try PublishedModel(arguments: trusting ? ["--trusted-proxy", "127.0.0.1/32"] : [])
        let balancer = try Balancer(replicas: [published.server], in: published.scratch)
        let output = try Subprocess.run("python3", ["-c", Self.script, "\(balancer.url.port ?? 0)", published.appKey])
        #expect(output.status == 0, "\(output.error)")
        return try JSONDecoder().decode(Result.self, from: Data(output.text.utf8))
    }

    @Test func behindATrustedProxyOneClientsFailuresDoNotThrottleAnother() throws {
        let result = try Self.run(trusting: true)
        #expect(result.failing == Array(repeating: 401, count: 11), "10 failures allowed, the 11th starts a backoff")
        #expect(result.blocked == 429, "the failing client waits, by its own address")
        #expect(result.neighbour == 200, "its neighbour, whose address the failing client put in X-Forwarded-For, does not")
    }

    @Test func withoutTrustingTheProxyEveryClientHasItsAddress() throws {
        let result = try Self.run(trusting: false)
        #expect(result.blocked == 429)
        #expect(result.neighbour == 429, "one client's failures throttle everyone behind the proxy")
    }
}
