import Foundation
import TestSupport
import Testing

/// Failed authentications against a real `depot serve`, from several loopback addresses
/// (127.0.0.0/8 is all on `lo`): an address that keeps failing waits, with `429` and
/// `Retry-After`, also on the fast path; a key id that keeps getting wrong secrets refuses them,
/// but never its right secret.
@Suite struct AuthenticationThrottleEndToEndTests {
    /// Each request on a new connection from the given source address; prints JSON.
    static let script = """
        import http.client, json, sys
        host, port, good, key_id = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
        def get(source, secret):
            connection = http.client.HTTPConnection(host, port, timeout=10, source_address=(source, 0))
            connection.request("GET", "/v1/models/flowers/manifest", headers={"Authorization": "Bearer " + secret})
            response = connection.getresponse()
            response.read()
            connection.close()
            return [response.status, response.getheader("Retry-After")]
        result = {}
        result["failing"] = [get("127.0.0.20", "wrong")[0] for _ in range(11)]
        result["blocked"] = get("127.0.0.20", good)
        result["neighbour"] = get("127.0.0.21", good)[0]
        guess = "depot_" + key_id + "_" + "0" * 64
        result["guesses"] = [get("127.0.0.%d" % (30 + i), guess) for i in range(12)]
        result["owner"] = get("127.0.0.50", good)[0]
        print(json.dumps(result))
        """

    struct Result: Decodable {
        let failing: [Int]
        let blocked: [Status]
        let neighbour: Int
        let guesses: [[Status]]
        let owner: Int
    }

    /// A status code or a `Retry-After` value (or its absence).
    enum Status: Decodable, Equatable {
        case code(Int)
        case text(String?)
        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let code = try? container.decode(Int.self) { self = .code(code) } else { self = .text(try container.decode(String?.self)) }
        }
    }

    @Test func failingAddressesWaitAndGuessedKeysRefuseOnlyWrongSecrets() throws {
        let published = try PublishedModel()
        let server = published.server
        let keyID = String(published.appKey.split(separator: "_")[1])
        let output = try Subprocess.run(
            "python3",
            [
                "-c", Self.script, server.url.host ?? "127.0.0.1", "\(server.url.port ?? 0)",
                published.appKey, keyID,
            ])
        #expect(output.status == 0, "\(output.error)")
        let result = try JSONDecoder().decode(Result.self, from: Data(output.text.utf8))

        #expect(result.failing == Array(repeating: 401, count: 11), "10 failures allowed, the 11th starts a 1 s backoff")
        #expect(result.blocked == [.code(429), .text("1")], "the right key waits too, also on the fast path")
        #expect(result.neighbour == 200, "other addresses are not affected")
        #expect(result.guesses.map(\.first) == Array(repeating: .code(401), count: 10) + [.code(429), .code(429)])
        #expect(result.guesses.last?.last != .text(nil), "429 names Retry-After")
        #expect(result.owner == 200, "the key's right secret still works")

        let manifestURL = server.url.appendingPathComponent("v1/models/flowers/manifest").absoluteString
        #expect(
            eventually {
                (try? Command.curl([
                    "--interface", "127.0.0.20", "-o", "/dev/null", "-w", "%{http_code}", "-H",
                    "Authorization: Bearer \(published.appKey)", manifestURL,
                ]).text) == "200"
            }, "the address may try again after its backoff")
        #expect(try server.metric("depot_authentication_failures_total") == 11 + 12)
        #expect(try server.metric("depot_authentication_throttled_total") >= 3, "the three above, and any poll that came too early")
    }
}
