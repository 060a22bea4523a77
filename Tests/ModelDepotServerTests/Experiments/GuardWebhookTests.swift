import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotRollouts
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepotServer

/// A guard's webhook against a real receiver on 127.0.0.1: every move is posted, signed, and
/// retried after a failure with the same delivery id, also after its guard ended; a redirect is
/// not followed, and an answer that drips ends at the attempt's deadline.
@Suite struct GuardWebhookTests {
    /// Records what it is sent and answers with the statuses it is given, then 200.
    actor Receiver {
        struct Delivery: Sendable {
            let delivery: String
            let signature: String
            let body: Data
        }

        private(set) var received: [Delivery] = []
        private var statuses: [HTTPResponse.Status]

        init(statuses: [HTTPResponse.Status]) { self.statuses = statuses }

        func take(_ delivery: Delivery) -> HTTPResponse.Status {
            received.append(delivery)
            return statuses.isEmpty ? .ok : statuses.removeFirst()
        }

        /// Runs a server for the receiver until `body` returns, passing `body` its URL.
        func serve(_ body: @escaping @Sendable (URL) async throws -> Void) async throws {
            let router = Router()
            router.post("hook") { request, _ -> Response in
                let bytes = try await request.body.collect(upTo: 1 << 20)
                let delivery = Delivery(
                    delivery: request.headers[HTTPField.Name("Depot-Delivery")!] ?? "",
                    signature: request.headers[HTTPField.Name("Depot-Signature")!] ?? "",
                    body: Data(bytes.readableBytesView))
                return Response(status: await self.take(delivery))
            }
            router.post("large") { _, _ -> Response in
                Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(repeating: UInt8(ascii: "x"), count: 200 << 10)))
            }
            router.post("moved") { _, _ -> Response in
                Response(status: .temporaryRedirect, headers: [.location: "/hook"])
            }
            // The head at once, then a byte every 200 ms for 5 s.
            router.post("drip") { _, _ -> Response in
                Response(
                    status: .ok,
                    body: ResponseBody { writer in
                        for _ in 0..<25 {
                            try await writer.write(ByteBuffer(string: "x"))
                            try await Task.sleep(for: .milliseconds(200))
                        }
                        try await writer.finish(nil)
                    })
            }
            let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.testShuttingDown(.live) { client in
                try await body(URL(string: "http://127.0.0.1:\(client.port!)/hook")!)
            }
        }
    }

    static let secret = "webhook-secret-0123456789"

    static let payload = GuardWebhook.Payload(
        delivery: "d-1", model: "flowers", rule: "main", ruleId: "r-1", control: 1, target: 2, state: .rolledBack,
        move: .init(kind: .rolledBack, at: Date(), share: 0, reason: "test", by: "guard"))

    @Test func aRedirectIsNotFollowed() async throws {
        let receiver = Receiver(statuses: [])
        try await receiver.serve { url in
            let moved = url.deletingLastPathComponent().appendingPathComponent("moved")
            let failure = await GuardWebhook().send(Self.payload, to: moved, secret: Self.secret, at: Date())
            #expect(failure == "the receiver answered 307")
            #expect(await receiver.received.isEmpty, "the redirect's target was never posted to")
            #expect(await GuardWebhook().send(Self.payload, to: url, secret: Self.secret, at: Date()) == nil)
            let large = url.deletingLastPathComponent().appendingPathComponent("large")
            #expect(
                await GuardWebhook().send(Self.payload, to: large, secret: Self.secret, at: Date()) == nil,
                "a 2xx with a 200 KiB answer is delivered (the body is not judged)")
        }
    }

    @Test func anAnswerThatDripsEndsAtTheAttemptsDeadline() async throws {
        let receiver = Receiver(statuses: [])
        try await receiver.serve { url in
            let drip = url.deletingLastPathComponent().appendingPathComponent("drip")
            let failure = await GuardWebhook(deadline: .seconds(1)).send(Self.payload, to: drip, secret: Self.secret, at: Date())
            #expect(failure?.contains("did not answer within 1000 ms") == true, "\(String(describing: failure))")
        }
    }

    /// The server's own reviews (every second here) retry a failed delivery after its guard ended.
    @Test(arguments: DepotBackend.allCases) func aDeliveryIsRetriedAfterItsGuardEnded(_ backend: DepotBackend) async throws {
        let receiver = Receiver(statuses: [.ok, .serviceUnavailable])
        try await receiver.serve { url in
            let clock = MovableClock()
            var server = try await GuardedRolloutFleet.server(backend, clock: clock)
            server.configuration.guardReviewInterval = .seconds(1)
            try await server.run { client in
                _ = try await GuardedRolloutFleet.prepare(client, clock: clock)
                _ = try await GuardedRolloutFleet.start(client, minimumInstallations: 20, webhook: url, secret: Self.secret)
                let stopped = try await client.request(.delete, "/v1/admin/models/flowers/rollout/guards/main").decode(RolloutGuard.self)
                #expect(stopped.state == .stopped)
                // The stop's delivery is posted by the stop, or by the periodic review when that
                // claimed it first (the stop's answer then shows it under way): either way it failed once.
                let failed = try await polled(
                    { try await client.request(.get, "/v1/admin/models/flowers/rollout/guards").decode(RolloutGuards.self) },
                    until: { $0.guards.last?.moves.last?.delivery?.attempts == 1 })
                #expect(failed.guards.last?.moves.last?.delivery?.lastError?.contains("503") == true, "\(failed)")
                clock.advance(by: 31)
                #expect(await eventually { await receiver.received.count == 3 }, "the stop's delivery was posted again")
                let guards = try await polled(
                    { try await client.request(.get, "/v1/admin/models/flowers/rollout/guards").decode(RolloutGuards.self) },
                    until: { $0.guards.last?.moves.last?.delivery?.delivered != nil })
                #expect(guards.guards.last?.moves.last?.delivery?.attempts == 2)
            }
        }
    }

    @Test(arguments: DepotBackend.allCases) func movesArePostedSignedAndRetriedAfterAFailure(_ backend: DepotBackend) async throws {
        let receiver = Receiver(statuses: [.internalServerError])
        try await receiver.serve { url in
            let clock = MovableClock()
            let server = try await GuardedRolloutFleet.server(backend, clock: clock)
            try await server.run { client in
                _ = try await GuardedRolloutFleet.prepare(client, clock: clock)
                // A start whose time SQLite's JSON (milliseconds as a double) gives back a hair
                // later: the first attempt is still due at once.
                func roundTripsLater(_ date: Date) -> Bool {
                    Date(timeIntervalSince1970: 1_000 * date.timeIntervalSince1970 / 1_000) > date
                }
                for _ in 0..<10_000 where !roundTripsLater(clock.now) { clock.advance(by: 0.000_137) }
                #expect(roundTripsLater(clock.now))
                let started = try await GuardedRolloutFleet.start(client, minimumInstallations: 20, webhook: url, secret: Self.secret)
                #expect(await receiver.received.count == 1, "the start was posted at once")
                let failed = try #require(started.moves.first?.delivery)
                #expect(failed.attempts == 1 && failed.delivered == nil && failed.lastError?.contains("500") == true, "\(failed)")
                #expect(abs((failed.nextAttempt ?? .distantPast).timeIntervalSince(clock.now) - 30) < 1, "due again 30 s later")

                _ = try await client.request(.post, "/v1/admin/models/flowers/rollout/guards/review")
                #expect(await receiver.received.count == 1, "not retried before its time")
                clock.advance(by: 31)
                let reviewed = try await client.request(.post, "/v1/admin/models/flowers/rollout/guards/review").decode(RolloutGuards.self)
                let delivered = try #require(reviewed.guards.first?.moves.first?.delivery)
                #expect(delivered.attempts == 2 && delivered.delivered != nil && delivered.nextAttempt == nil && delivered.lastError == nil)

                let stopped = try await client.request(.delete, "/v1/admin/models/flowers/rollout/guards/main").decode(RolloutGuard.self)
                #expect(stopped.moves.last?.delivery?.delivered != nil)

                let received = await receiver.received
                #expect(received.count == 3)
                #expect(received[0].delivery == received[1].delivery && received[0].delivery == failed.id, "a retry keeps the delivery id")
                for delivery in received {
                    let parts = Dictionary(
                        uniqueKeysWithValues: delivery.signature.split(separator: ",").map {
                            let pair = $0.split(separator: "=", maxSplits: 1)
                            return (String(pair[0]), String(pair.count > 1 ? pair[1] : ""))
                        })
                    var signed = Data("\(parts["t"] ?? "").".utf8)
                    signed.append(delivery.body)
                    let expected = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Data(Self.secret.utf8)))
                    #expect(parts["v1"] == Array(expected).map { String(format: "%02x", $0) }.joined(), "the signature checks out")
                    var tampered = delivery.body
                    tampered[tampered.startIndex] ^= 1
                    var forged = Data("\(parts["t"] ?? "").".utf8)
                    forged.append(tampered)
                    #expect(
                        !HMAC<SHA256>.isValidAuthenticationCode(
                            Array(expected), authenticating: forged, using: SymmetricKey(data: Data(Self.secret.utf8))))
                }
                let decoder = JSONDecoder()
                decoder.dateDecodingStrategy = .iso8601
                struct Posted: Decodable {
                    let delivery: String, model: String, rule: String, control: Int, target: Int, state: RolloutGuard.State
                    let move: RolloutGuard.Move
                }
                let first = try decoder.decode(Posted.self, from: received[0].body)
                #expect(first.model == "flowers" && first.rule == "main" && first.control == 1 && first.target == 2)
                #expect(first.state == .running && first.move.kind == .started && first.move.delivery == nil)
                let last = try decoder.decode(Posted.self, from: received[2].body)
                #expect(last.state == .stopped && last.move.kind == .stopped)
            }
        }
    }
}
