import Foundation
import TestSupport
import Testing

/// Failed authentications against a real `depot serve`, from several loopback addresses
/// (127.0.0.0/8 is all on `lo`): an address that keeps failing waits, with `429` and
/// `Retry-After`, also on the fast path — but a valid generated key is never refused for its
/// address; admin failures count apart, and only an admin success ends them; a key id that keeps
/// getting wrong secrets refuses them, but never its right secret.
@Suite struct AuthenticationThrottleEndToEndTests {
    @Test func failingAddressesWaitButNeverRefuseAValidGeneratedKey() async throws {
        let published = try await PublishedModel()
        let server = published.server
        let keyID = String(published.appKey.split(separator: "_")[1])
        // Each request on a connection of its own, from the given source address.
        func get(_ path: String = "/v1/models/flowers/manifest", from source: String, _ secret: String) throws -> RawHTTPConnection.Answer {
            try RawHTTPConnection.get(path, port: server.url.port ?? 0, from: source, headers: [("Authorization", "Bearer \(secret)")])
        }
        let failing = try (0..<11).map { _ in try get(from: "127.0.0.20", "wrong").status }
        #expect(failing == Array(repeating: 401, count: 11), "10 failures allowed, the 11th starts a 1 s backoff")
        let blocked = try get(from: "127.0.0.20", "wrong")
        #expect(blocked.status == 429 && blocked.field("retry-after") == "1", "a guess from the address waits")
        #expect(try get(from: "127.0.0.20", published.appKey).status == 200, "a valid generated key does not, also on the fast path")
        #expect(
            try get(from: "127.0.0.20", "wrong").status == 429,
            "a secret not of the generated form guesses at an operator's admin token, on any route: an app key's success does not end its count"
        )

        // Guesses at the admin API (in the generated form, so each is checked and counted: the
        // backoff grows to 16 s), then the operator's own token from the same address.
        let adminGuesses = try (0..<15).map { _ in
            try get("/v1/admin/models", from: "127.0.0.22", "depot_" + randomHex(12) + "_" + randomHex(64)).status
        }
        #expect(adminGuesses == Array(repeating: 401, count: 11) + Array(repeating: 429, count: 4))
        let admin = try get("/v1/admin/models", from: "127.0.0.22", ServerProcess.adminToken)
        #expect(admin.status == 429, "an operator's token waits out its address's admin backoff")
        #expect(try get(from: "127.0.0.22", published.appKey).status == 200, "device routes are not held back by admin failures")
        #expect(
            try get("/v1/admin/models", from: "127.0.0.22", ServerProcess.adminToken).status == 429,
            "an app key's success does not end the admin count")
        #expect(try get("/v1/admin/models", from: "127.0.0.23", ServerProcess.adminToken).status == 200)

        let guess = "depot_\(keyID)_" + String(repeating: "0", count: 64)
        let guesses = try (0..<12).map { try get(from: "127.0.0.\(30 + $0)", guess) }
        #expect(guesses.map(\.status) == Array(repeating: 401, count: 10) + [429, 429])
        #expect(guesses.last?.field("retry-after") != nil, "429 names Retry-After")
        #expect(try get(from: "127.0.0.50", published.appKey).status == 200, "the key's right secret still works")

        await #expect(try server.metric("depot_authentication_failures_total") == 11 + 15 + 12)
        await #expect(try server.metric("depot_authentication_throttled_total") == 2 + 4 + 2 + 2)
    }

    private func randomHex(_ count: Int) -> String {
        String((0..<count).map { _ in "0123456789abcdef".randomElement()! })
    }
}
