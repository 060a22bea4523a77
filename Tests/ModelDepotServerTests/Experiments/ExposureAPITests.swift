import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotRollouts
import ModelDepotShared
import TestSupport
import Testing

/// Exposure tokens over HTTP, sent as an attacker would (raw JSON): manifest answers carry them,
/// an event counts only with the token made for its installation, model, version and arm, a
/// token that does not check refuses its event alone, and an event without one is kept apart.
@Suite struct ExposureAPITests {
    static let exposure = HTTPField.Name(DepotHeader.exposure)!

    /// Models `flowers` (versions 1 and 2, the default 1) and `birds` (version 1), an app key.
    func prepare(_ client: TestServer.Client) async throws -> HTTPFields {
        for name in ["flowers", "birds"] {
            try await client.createModel(name)
            _ = try await client.upload("float_classifier", to: name)
        }
        _ = try await client.upload("int8_conv", to: "flowers")
        #expect(try await client.json(.put, "/v1/admin/models/flowers/rollout/default", RolloutVersionChoice(version: 1)).status == .ok)
        return try await client.appKey()
    }

    func manifest(
        _ client: TestServer.Client, _ key: HTTPFields, model: String = "flowers", installation: String?, etag: String? = nil,
        held: String? = nil
    ) async throws -> TestServer.Response {
        var headers = key
        if let installation { headers[HTTPField.Name(DepotHeader.installationID)!] = installation }
        if let etag { headers[.ifNoneMatch] = etag }
        if let held { headers[Self.exposure] = held }
        return try await client.request(.get, "/v1/models/\(model)/manifest", headers: headers)
    }

    func event(version: Int = 1, at: Date = Date()) -> String {
        #"{"metric":"installed","version":\#(version),"arm":"default","at":\#(Int(at.timeIntervalSince1970))}"#
    }

    func exposure(version: Int = 1, _ token: String) -> String {
        #"{"version":\#(version),"arm":"default","token":"\#(token)"}"#
    }

    func send(
        _ client: TestServer.Client, _ key: HTTPFields, installation: String, _ events: [String], exposures: [String] = []
    ) async throws -> TestServer.Response {
        let body = #"""
            {"batch":"\#(UUID().uuidString)","installation":"\#(installation)","dropped":0,"events":[\#(events.joined(separator: ","))],\#
            "exposures":[\#(exposures.joined(separator: ","))]}
            """#
        return try await client.request(.post, "/v1/models/flowers/events", headers: key, body: ByteBuffer(string: body))
    }

    @Test(arguments: DepotBackend.allCases) func manifestAnswersToAnInstallationCarryItsToken(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let key = try await prepare(client)
            let anonymous = try await manifest(client, key, installation: nil)
            #expect(anonymous.status == .ok && anonymous.headers[Self.exposure] == nil, "no installation, no token")
            let full = try await manifest(client, key, installation: "device-1")
            let token = try #require(full.headers[Self.exposure])
            let unchanged = try await manifest(client, key, installation: "DEVICE-1", etag: full.headers[.eTag])
            #expect(unchanged.status == .notModified && unchanged.headers[Self.exposure] == token, "a 304 carries it too, any case")
            let other = try await manifest(client, key, installation: "device-2")
            #expect(other.headers[Self.exposure] != token)
        }
    }

    /// A device that sends today's token under the current key with its check gets a `304`
    /// without a new one (no MAC made); a token of another day or key, text that is no token, and
    /// every `200` get today's.
    @Test(arguments: DepotBackend.allCases) func aCheckHoldingTodaysTokenGetsA304WithoutANewOne(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run(live: true) { client in
            let key = try await prepare(client)
            let full = try await manifest(client, key, installation: "device-1")
            let token = try #require(full.headers[Self.exposure])
            let etag = try #require(full.headers[.eTag])
            let held = try await manifest(client, key, installation: "device-1", etag: etag, held: token)
            #expect(held.status == .notModified && held.headers[Self.exposure] == nil)
            let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            let (day, hint, mac) = (try #require(Int(parts[0])), parts[1], parts[2])
            let otherHint = hint == "ffff" ? "0000" : "ffff"
            for stale in [
                "\(day - 1).\(hint).\(mac)", "\(day + 1).\(hint).\(mac)", "\(day).\(otherHint).\(mac)", "\(day)", "\(day).\(hint)",
                "\(day).\(hint)x\(mac)", "x\(token)", String(repeating: "9", count: 30) + ".\(hint).\(mac)", "-\(token)",
                "\(day).\(hint.uppercased()).\(mac)",
            ] where stale != token {
                let answer = try await manifest(client, key, installation: "device-1", etag: etag, held: stale)
                #expect(answer.status == .notModified && answer.headers[Self.exposure] == token, "held '\(stale)'")
            }
            let changed = try await manifest(client, key, installation: "device-1", held: token)
            #expect(changed.status == .ok && changed.headers[Self.exposure] == token, "a 200 always carries one")
        }
    }

    @Test(arguments: DepotBackend.allCases) func onlyTheTokenMadeForAVersionCountsItsEventsAndARefusalTakesOnlyThose(
        _ backend: DepotBackend
    )
        async throws
    {
        try await TestServer(backend).run { client in
            let key = try await prepare(client)
            let own = try #require(try await manifest(client, key, installation: "device-1").headers[Self.exposure])
            let copied = try #require(try await manifest(client, key, installation: "device-2").headers[Self.exposure])
            let birds = try #require(try await manifest(client, key, model: "birds", installation: "device-1").headers[Self.exposure])
            // Version 1's token is its own; version 2's was made for version 1.
            let response = try await send(
                client, key, installation: "device-1", [event(), event(version: 2), event(), event(version: 2)],
                exposures: [exposure(own), exposure(version: 2, own)])
            #expect(response.status == .ok, "\(response.text)")
            let receipt = try response.decode(OutcomeReceipt.self)
            #expect(receipt.accepted == 2)
            #expect(receipt.refused?.map(\.events) == [[1, 3]], "one entry per reason")
            #expect(receipt.refused?.allSatisfy { $0.status == 403 && $0.error == "invalid_exposure" } == true)
            #expect(receipt.refused?.first?.message.contains("not one this server made for this installation") == true)
            for token in [copied, birds, "20424.AAAAAAAAAAAAAAAAAAAAAA"] {
                let refused = try await send(client, key, installation: "device-1", [event(), event()], exposures: [exposure(token)])
                let receipt = try refused.decode(OutcomeReceipt.self)
                #expect(receipt.accepted == 0 && receipt.refused?.map(\.events) == [[0, 1]], "\(token): \(receipt)")
            }

            // A thousand refused events make a receipt of a few kilobytes (the SDK reads at most 64 KiB).
            let many = try await send(
                client, key, installation: "device-1", Array(repeating: event(), count: 1_000), exposures: [exposure(copied)])
            let refusedMany = try many.decode(OutcomeReceipt.self).refused
            #expect(many.body.readableBytes < 8_192 && refusedMany?.first?.events.count == 1_000, "\(many.body.readableBytes) bytes")

            // An installation with events but no token is kept apart, not compared.
            #expect(try await send(client, key, installation: "device-3", [event(version: 2)]).status == .ok)
            let results = try await client.request(.get, "/v1/admin/models/flowers/experiment").decode(ExperimentResults.self)
            let arm = try #require(results.arms.first)
            #expect(arm.installations == ["1": 1] && arm.uncounted == ["2": 1], "\(arm)")
            #expect(arm.metrics.first { $0.metric.name == "installed" }?.statistics["2"] == nil, "nothing uncounted is compared")
        }
    }

    @Test(arguments: DepotBackend.allCases) func oneNetworkAddsItsAllowancePerHourAndATokenIsRefusedAfterEightDays(_ backend: DepotBackend)
        async throws
    {
        let clock = MovableClock()
        var server = try await TestServer(backend)
        server.configuration.clock = { clock.now }
        server.configuration.outcomeInstallationsPerNetwork = 2
        try await server.run { client in
            let key = try await prepare(client)
            // Forged tokens from the network take none of its places.
            for forged in 0..<3 {
                let receipt = try await send(
                    client, key, installation: "forged-\(forged)", [event()], exposures: [exposure("20789.AAAAAAAAAAAAAAAAAAAAAA")])
                #expect(try receipt.decode(OutcomeReceipt.self).refused?.first?.error == "invalid_exposure")
            }
            var tokens: [String] = []
            for device in 0..<4 {
                tokens.append(try #require(try await manifest(client, key, installation: "device-\(device)").headers[Self.exposure]))
            }
            for device in 0..<3 {
                let receipt = try await send(
                    client, key, installation: "device-\(device)", [event()], exposures: [exposure(tokens[device])]
                )
                .decode(OutcomeReceipt.self)
                #expect(receipt.accepted == 1 && receipt.refused == nil, "kept, whether counted or not")
            }
            // A second version in the arm (without a token) makes the arm show in the results.
            #expect(try await send(client, key, installation: "device-9", [event(version: 2)]).status == .ok)
            let results = try await client.request(.get, "/v1/admin/models/flowers/experiment").decode(ExperimentResults.self)
            let arm = try #require(results.arms.first)
            #expect(arm.installations == ["1": 2] && arm.uncounted == ["1": 1, "2": 1], "the third of one network is kept apart: \(arm)")

            clock.advance(by: 9 * 86_400)
            let late = try await send(client, key, installation: "device-3", [event(at: clock.now)], exposures: [exposure(tokens[3])])
            let refusal = try #require(try late.decode(OutcomeReceipt.self).refused?.first)
            #expect(refusal.error == "expired_exposure" && refusal.status == 403, "\(refusal)")
        }
    }
}
