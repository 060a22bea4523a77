import Foundation
import TestSupport
import Testing

/// Failed authentications against a real `depot serve`, from several loopback addresses
/// (127.0.0.0/8 is all on `lo`): an address that keeps failing waits, with `429` and
/// `Retry-After`, also on the fast path; a key id that keeps getting wrong secrets refuses them,
/// but never its right secret.
@Suite struct AuthenticationThrottleEndToEndTests {
    @Test func failingAddressesWaitAndGuessedKeysRefuseOnlyWrongSecrets() async throws {
        let published = try await PublishedModel()
        let server = published.server
        let keyID = String(published.appKey.split(separator: "_")[1])
        // Each request on a connection of its own, from the given source address.
        func get(from source: String, _ secret: String) throws -> RawHTTPConnection.Answer {
            try RawHTTPConnection.get(
                "/v1/models/flowers/manifest", port: server.url.port ?? 0, from: source, headers: [("Authorization", "Bearer \(secret)")])
        }
        let failing = try (0..<11).map { _ in try get(from: "127.0.0.20", "wrong").status }
        #expect(failing == Array(repeating: 401, count: 11), "10 failures allowed, the 11th starts a 1 s backoff")
        let blocked = try get(from: "127.0.0.20", published.appKey)
        #expect(blocked.status == 429 && blocked.field("retry-after") == "1", "the right key waits too, also on the fast path")
        #expect(try get(from: "127.0.0.21", published.appKey).status == 200, "other addresses are not affected")
        let guess = "depot_\(keyID)_" + String(repeating: "0", count: 64)
        let guesses = try (0..<12).map { try get(from: "127.0.0.\(30 + $0)", guess) }
        #expect(guesses.map(\.status) == Array(repeating: 401, count: 10) + [429, 429])
        #expect(guesses.last?.field("retry-after") != nil, "429 names Retry-After")
        #expect(try get(from: "127.0.0.50", published.appKey).status == 200, "the key's right secret still works")

        let manifestURL = server.url.appendingPathComponent("v1/models/flowers/manifest").absoluteString
        await #expect(
            eventually {
                (try? await Command.curl([
                    "--interface", "127.0.0.20", "-o", "/dev/null", "-w", "%{http_code}", "-H",
                    "Authorization: Bearer \(published.appKey)", manifestURL,
                ]).text) == "200"
            }, "the address may try again after its backoff")
        await #expect(try server.metric("depot_authentication_failures_total") == 11 + 12)
        await #expect(try server.metric("depot_authentication_throttled_total") >= 3, "the three above, and any poll that came too early")
    }
}
