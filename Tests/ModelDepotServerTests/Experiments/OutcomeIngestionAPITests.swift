import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotRollouts
import ModelDepotShared
import TestSupport
import Testing

/// `POST /v1/models/{name}/events`: what is stored, what is refused (with nothing stored), and
/// what the results read from it.
@Suite struct OutcomeIngestionAPITests {
    static let now = Int(Date().timeIntervalSince1970)

    /// A model with versions 1 and 2 split 50/50 by one rule; returns the app key and the rule's arm.
    func experiment(_ client: TestServer.Client) async throws -> (key: HTTPFields, arm: String) {
        try await client.createModel("flowers")
        _ = try await client.upload("float_classifier", to: "flowers")
        _ = try await client.upload("int8_conv", to: "flowers")
        let rule = RolloutRuleChange(
            conditions: [], shares: [.init(version: 1, basisPoints: 5_000), .init(version: 2, basisPoints: 5_000)])
        let rollout = try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/half", rule).decode(Rollout.self)
        return (try await client.appKey(), "rule:\(rollout.rules[0].id)")
    }

    func send(_ client: TestServer.Client, _ key: HTTPFields, _ batch: OutcomeBatch, model: String = "flowers") async throws
        -> TestServer.Response
    {
        try await client.json(.post, "/v1/models/\(model)/events", batch, headers: key)
    }

    func raw(_ client: TestServer.Client, _ key: HTTPFields, _ body: String) async throws -> TestServer.Response {
        try await client.request(.post, "/v1/models/flowers/events", headers: key, body: ByteBuffer(string: body))
    }

    /// An installation the rollout gives `version` (ids `<prefix>.0`, `<prefix>.1`, … until one
    /// lands on it) and the exposure token of its manifest answer.
    func installation(on version: Int, _ client: TestServer.Client, _ key: HTTPFields, prefix: String) async throws -> (
        id: String, exposure: String
    ) {
        for attempt in 0..<64 {
            var headers = key
            headers[HTTPField.Name(DepotHeader.installationID)!] = "\(prefix).\(attempt)"
            let response = try await client.request(.get, "/v1/models/flowers/manifest", headers: headers)
            let exposure = try #require(response.headers[HTTPField.Name(DepotHeader.exposure)!], "\(response.status) \(response.text)")
            if try response.manifest().version == version { return ("\(prefix).\(attempt)", exposure) }
        }
        throw TestServer.Failure("64 installations in a row missed version \(version)")
    }

    func results(_ client: TestServer.Client) async throws -> ExperimentResults {
        try await client.request(.get, "/v1/admin/models/flowers/experiment").decode(ExperimentResults.self)
    }

    @Test(arguments: DepotBackend.allCases) func loadFailuresOnOneVersionShowAsWorseAndABatchSentTwiceCountsOnce(_ backend: DepotBackend)
        async throws
    {
        // Under the router tester every request comes from one client network: all 400 count.
        var server = try await TestServer(backend)
        server.configuration.outcomeInstallationsPerNetwork = 400
        try await server.run { client in
            let (key, arm) = try await experiment(client)
            // 200 installations per version; 4 % of version 1's fail to load, 30 % of version 2's.
            var sent: [OutcomeBatch] = []
            for index in 0..<400 {
                let version = index % 2 + 1
                let fails = version == 1 ? index / 2 % 50 < 2 : index / 2 % 10 < 3
                let (device, exposure) = try await installation(on: version, client, key, prefix: "device-\(index)")
                var events = [OutcomeBatch.Event(metric: "installed", version: version, arm: arm, at: Self.now - 60)]
                events.append(
                    .init(
                        metric: fails ? "load_failed" : "load_succeeded", version: version, arm: arm, at: Self.now - 50,
                        code: fails ? "unsupported_model" : nil))
                if !fails {
                    events += (0..<3).map { _ in
                        OutcomeBatch.Event(
                            metric: "inference_latency_ms", version: version, arm: arm, at: Self.now - 40, value: Double(10 + index % 7))
                    }
                }
                let batch = OutcomeBatch(
                    batch: UUID().uuidString, installation: device, events: events,
                    exposures: [.init(version: version, arm: arm, token: exposure)])
                let receipt = try await send(client, key, batch).decode(OutcomeReceipt.self)
                #expect(receipt.accepted == events.count && !receipt.duplicate)
                sent.append(batch)
            }
            let before = try await results(client)
            let again = try await send(client, key, sent[7])
            #expect(again.status == .ok)
            let receipt = try again.decode(OutcomeReceipt.self)
            #expect(receipt.duplicate && receipt.accepted == 0 && receipt.batch == sent[7].batch.lowercased())
            let after = try await results(client)
            #expect(after.arms == before.arms, "the batch sent again changed nothing")

            let result = try #require(after.arms.first)
            #expect(result.arm == arm && result.name == "half" && result.control == 1)
            #expect(result.installations == ["1": 200, "2": 200])
            #expect(result.sampleRatio?.mismatch == false)
            let loadFailed = try #require(result.metrics.first { $0.metric.name == "load_failed" })
            #expect(loadFailed.statistics["1"] == MetricStatistic(kind: .proportion, n: 200, sum: 8))
            #expect(loadFailed.statistics["2"] == MetricStatistic(kind: .proportion, n: 200, sum: 60))
            let effect = try #require(loadFailed.effects.first)
            #expect(effect.version == 2 && effect.verdict == .worse, "\(effect.summary)")
            #expect(effect.absolute.fixed.estimate == 60.0 / 200 - 8.0 / 200)
            #expect(effect.relative.fixed.estimate == (60.0 / 200 - 8.0 / 200) / (8.0 / 200))
            #expect(effect.summary.hasPrefix("Version 2 is worse on load_failed than version 1: +26.0 points"), "\(effect.summary)")
            #expect(!loadFailed.series.isEmpty && loadFailed.series.allSatisfy { $0.version == 2 })
            let latency = try #require(result.metrics.first { $0.metric.name == "inference_latency_ms" })
            #expect(
                latency.statistics["1"]?.n == 192 && latency.statistics["2"]?.n == 140, "a mean is over the installations that recorded it")
            #expect(latency.effects.first?.verdict == .inconclusive)
        }
    }

    @Test(arguments: DepotBackend.allCases) func appMetricsAreDeclaredOrRecordedUpToALimitAndReadAsDeclared(_ backend: DepotBackend)
        async throws
    {
        try await TestServer(backend).run { client in
            let (key, arm) = try await experiment(client)
            let declared = try await client.json(
                .put, "/v1/admin/models/flowers/metrics/accepted",
                ["kind": "proportion", "direction": "increase"])
            #expect(declared.status == .ok)
            let health = try await client.json(.put, "/v1/admin/models/flowers/metrics/load_failed", ["kind": "sum"])
            #expect(health.status == .badRequest && health.error?.code == .invalidMetric)
            let badName = try await client.json(.put, "/v1/admin/models/flowers/metrics/Accepted!", ["kind": "sum"])
            #expect(badName.error?.code == .invalidMetric)

            // Sixteen names recorded without declaring them are kept; the seventeenth's events are
            // refused, and the rest of their batch (a declared metric, model health) is kept.
            for index in 0..<ExperimentMetric.maximumUndeclared {
                let batch = OutcomeBatch(
                    batch: UUID().uuidString, installation: "device-1",
                    events: [.init(metric: "free-\(index)", version: 1, arm: arm, at: Self.now)])
                #expect(try await send(client, key, batch).status == .ok)
            }
            let overflow = OutcomeBatch(
                batch: UUID().uuidString, installation: "device-1",
                events: [
                    .init(metric: "accepted", version: 1, arm: arm, at: Self.now),
                    .init(metric: "one-too-many", version: 2, arm: arm, at: Self.now),
                    .init(metric: "load_failed", version: 1, arm: arm, at: Self.now, code: "unsupported_model"),
                    .init(metric: "one-too-many", version: 2, arm: arm, at: Self.now - 3_600),
                ])
            let answer = try await send(client, key, overflow)
            #expect(answer.status == .ok, "\(answer.text)")
            let receipt = try answer.decode(OutcomeReceipt.self)
            #expect(receipt.accepted == 2 && receipt.refused?.map(\.events) == [[1, 3]], "\(receipt)")
            let refusal = try #require(receipt.refused?.first)
            #expect(refusal.status == 400 && refusal.error == "invalid_metric")
            #expect(
                refusal.message.contains("'one-too-many'") && refusal.message.contains("depot experiment metric add flowers one-too-many"),
                "\(refusal.message)")
            // The refused events were the batch's only ones of version 2: its installation is
            // exposed to version 1 alone (an arm is listed once two versions have installations).
            let exposed = try await results(client).arms
            #expect(exposed.isEmpty, "\(exposed)")
            let other = OutcomeBatch(
                batch: UUID().uuidString, installation: "device-2", events: [.init(metric: "accepted", version: 2, arm: arm, at: Self.now)])
            #expect(try await send(client, key, other).status == .ok)
            #expect(try await results(client).arms.first?.uncounted == ["1": 1, "2": 1])
            // An undeclared name can be removed: its slot is free again.
            #expect(try await client.request(.delete, "/v1/admin/models/flowers/metrics/free-0").status == .noContent)
            let again = OutcomeBatch(
                batch: UUID().uuidString, installation: "device-1",
                events: [.init(metric: "one-too-many", version: 1, arm: arm, at: Self.now)])
            #expect(try await send(client, key, again).decode(OutcomeReceipt.self).refused == nil)

            let metrics = try await client.request(.get, "/v1/admin/models/flowers/metrics").decode([ExperimentMetric].self)
            #expect(metrics.prefix(ExperimentMetric.health.count) == ExperimentMetric.health[...])
            let app = metrics.dropFirst(ExperimentMetric.health.count)
            #expect(app.count == 17 && app.first { $0.name == "accepted" }?.kind == .proportion)
            #expect(!app.contains { $0.name == "free-0" } && app.contains { $0.name == "one-too-many" })
            #expect(app.filter { $0.name.hasPrefix("free-") }.allSatisfy { $0.kind == .sum })
            #expect(try await client.request(.delete, "/v1/admin/models/flowers/metrics/accepted").status == .noContent)
            #expect(try await client.request(.delete, "/v1/admin/models/flowers/metrics/accepted").error?.code == .notFound)
            #expect(try await client.request(.delete, "/v1/admin/models/flowers/metrics/nothing").error?.code == .notFound)
        }
    }

    /// One made-up latency of 1e12 ms does not move version 1's mean: the model-health latency
    /// is capped at its 99th percentile, and the results say how many installations were held
    /// back. An app metric's cap is declared with it; a cap that breaks a rule is refused.
    @Test(arguments: DepotBackend.allCases) func anExtremeValueIsHeldBackByTheCapAndTheResultsSaySo(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let (key, arm) = try await experiment(client)
            for index in 0..<60 {
                let version = index % 2 + 1
                let (device, exposure) = try await installation(on: version, client, key, prefix: "device-\(index)")
                let latency = index == 0 ? 1e12 : Double(20 + index % 5)
                let events = [
                    OutcomeBatch.Event(metric: "inference_latency_ms", version: version, arm: arm, at: Self.now, value: latency),
                    OutcomeBatch.Event(metric: "session_seconds", version: version, arm: arm, at: Self.now, value: latency),
                ]
                let batch = OutcomeBatch(
                    batch: UUID().uuidString, installation: device, events: events,
                    exposures: [.init(version: version, arm: arm, token: exposure)])
                #expect(try await send(client, key, batch).status == .ok)
            }
            for body in [
                #"{"kind":"sum","cap":{"absolute":-1}}"#, #"{"kind":"sum","cap":{"percentile":1.5}}"#, #"{"kind":"sum","cap":{}}"#,
                #"{"kind":"sum","cap":{"absolute":1,"percentile":0.9}}"#, #"{"kind":"proportion","cap":{"absolute":1}}"#,
                #"{"kind":"sum","cap":{"absolute":1e999}}"#, #"{"kind":"sum","cap":"p99"}"#,
            ] {
                let refused = try await client.request(
                    .put, "/v1/admin/models/flowers/metrics/session_seconds", body: ByteBuffer(string: body))
                #expect(refused.status == .badRequest, "\(body): \(refused.status) \(refused.text)")
            }
            let declared = try await client.request(
                .put, "/v1/admin/models/flowers/metrics/session_seconds",
                body: ByteBuffer(string: #"{"kind":"mean","direction":"decrease","cap":{"absolute":100}}"#))
            #expect(try declared.decode(ExperimentMetric.self).cap == .absolute(100), "\(declared.text)")

            let result = try #require(try await results(client).arms.first)
            let latency = try #require(result.metrics.first { $0.metric.name == "inference_latency_ms" })
            #expect(latency.capped?.installations == 1 && (latency.capped?.limit ?? 0) <= 24, "\(String(describing: latency.capped))")
            #expect((latency.statistics["1"]?.mean ?? 0) < 25, "\(String(describing: latency.statistics["1"]))")
            let session = try #require(result.metrics.first { $0.metric.name == "session_seconds" })
            #expect(session.metric.cap == .absolute(100) && session.capped == .init(limit: 100, installations: 1))
            #expect((session.statistics["1"]?.mean ?? 0) < 30)
        }
    }

    /// Each refusal names what is wrong, and stores nothing of its batch.
    @Test(arguments: DepotBackend.allCases) func badBatchesAreRefusedWithTheirReasonAndStoreNothing(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let (key, arm) = try await experiment(client)
            let good = #"{"metric":"installed","version":1,"arm":"\#(arm)","at":\#(Self.now)}"#
            let one = try await installation(on: 1, client, key, prefix: "device")
            let two = try await installation(on: 2, client, key, prefix: "other")
            func batch(
                _ events: String, id: String = UUID().uuidString, installation: String = "device-1", dropped: String = "0",
                exposures: String = "[]"
            ) -> String {
                #"{"batch":"\#(id)","installation":"\#(installation)","dropped":\#(dropped),"events":[\#(events)],"exposures":\#(exposures)}"#
            }
            func exposure(_ version: Int, _ token: String) -> String { #"{"version":\#(version),"arm":"\#(arm)","token":"\#(token)"}"# }
            func event(_ replacing: String, with: String) -> String { good.replacingOccurrences(of: replacing, with: with) }
            let cases: [(body: String, code: DepotError.Code, says: String)] = [
                (batch(good, id: "not-a-uuid"), .invalidEvents, "is not a UUID"),
                (batch(good, installation: ""), .invalidEvents, "installation id has 0 bytes"),
                (batch(good, installation: String(repeating: "x", count: 257)), .invalidEvents, "257 bytes"),
                (batch(good, dropped: "-1"), .invalidEvents, "dropped=-1"),
                (batch([String](repeating: good, count: 1_001).joined(separator: ",")), .invalidEvents, "1001 events"),
                (batch(event("installed", with: "Installed")), .invalidEvents, "Metric name 'Installed'"),
                (batch(event("\"version\":1", with: "\"version\":0")), .invalidEvents, "version 0"),
                (batch(event("\"version\":1", with: "\"version\":9")), .invalidEvents, "version 9 of 'flowers', which does not exist"),
                (batch(event(arm, with: "unknown")), .invalidEvents, "arm 'unknown'"),
                (batch(event(arm, with: "rule:R 1")), .invalidEvents, "arm 'rule:R 1'"),
                (batch(event("\(Self.now)", with: "\(Self.now - 8 * 86_400)")), .invalidEvents, "within the last 7 days"),
                (batch(event("\(Self.now)", with: "\(Self.now + 3_600)")), .invalidEvents, "within the last 7 days"),
                (batch(event("}", with: ",\"value\":1e300}")), .invalidEvents, "finite number"),
                (batch(event("}", with: ",\"code\":\"Bad Code\"}")), .invalidEvents, "is not an error code"),
                (batch(event("installed", with: "inference_latency_ms")), .invalidEvents, "latency needs a value"),
                (
                    batch(good, installation: one.id, exposures: "[\(exposure(1, one.exposure)),\(exposure(1, one.exposure))]"),
                    .invalidEvents,
                    "two exposure tokens for version 1"
                ),
                (
                    batch(good, exposures: "[" + (1...1_001).map { exposure($0, "t") }.joined(separator: ",") + "]"), .invalidEvents,
                    "1001 exposures"
                ),
                (batch(good, exposures: #""\#(one.exposure)""#), .badRequest, "wrong type at 'exposures'"),
                (batch(good, exposures: #"[{"version":1,"arm":"\#(arm)"}]"#), .badRequest, "token"),
                (batch(event("\"version\":1", with: "\"version\":1e400")), .badRequest, "not valid JSON"),
                (batch(event("\"version\":1", with: "\"version\":99999999999999999999")), .badRequest, "does not fit its field"),
                (batch(event("\"at\":\(Self.now)", with: "\"at\":\"now\"")), .badRequest, "wrong type at 'events[0].at'"),
                (#"{"batch":1}"#, .badRequest, "wrong type at 'batch'"),
                (String(repeating: "[", count: 10_000), .badRequest, "not valid JSON"),
                ("\u{0}\u{1}\u{ff}", .badRequest, "not valid JSON"),
            ]
            for (body, code, says) in cases {
                let response = try await raw(client, key, body)
                #expect(response.error?.code == code, "\(body.prefix(120)): \(response.status) \(response.text)")
                #expect(response.error?.message.contains(says) == true, "\(body.prefix(120)): \(response.text)")
            }
            let tooLarge = try await raw(client, key, batch(good) + String(repeating: " ", count: OutcomeBatch.maximumSize))
            #expect(tooLarge.status == .contentTooLarge && tooLarge.error?.code == .payloadTooLarge)
            // The first event is fine, the second is not: neither is stored, and the batch id is
            // still free (sending the batch fixed is applied).
            let id = UUID().uuidString
            let exposed = "[\(exposure(1, one.exposure))]"
            let mixed = try await raw(
                client, key,
                batch(good + "," + event("\"version\":1", with: "\"version\":9"), id: id, installation: one.id, exposures: exposed))
            #expect(mixed.error?.code == .invalidEvents)
            #expect(try await results(client).arms.isEmpty, "no refused event was stored")
            let fixed = try await raw(client, key, batch(good, id: id, installation: one.id, exposures: exposed))
            #expect(try fixed.decode(OutcomeReceipt.self) == OutcomeReceipt(batch: id.lowercased(), accepted: 1, duplicate: false))
            let second = event("\"version\":1", with: "\"version\":2")
            #expect(
                try await raw(client, key, batch(second, installation: two.id, exposures: "[\(exposure(2, two.exposure))]")).status == .ok)
            #expect(try await results(client).arms.first?.installations == ["1": 1, "2": 1])
        }
    }

    @Test(arguments: DepotBackend.allCases) func anInstallationsEventsPerHourAreBoundedAndOtherModelsKeysAreRefused(_ backend: DepotBackend)
        async throws
    {
        // The server's clock stands still: the batches all arrive in one hour even when a busy
        // machine makes the test cross an hour of the wall clock.
        var server = try await TestServer(backend)
        server.configuration.clock = { Date(timeIntervalSince1970: TimeInterval(Self.now)) }
        try await server.run { client in
            let (key, arm) = try await experiment(client)
            let full = (0..<OutcomeBatch.maximumEvents).map { _ in
                OutcomeBatch.Event(metric: "inferences", version: 1, arm: arm, at: Self.now)
            }
            for _ in 0..<(OutcomeBatch.maximumEventsPerHour / OutcomeBatch.maximumEvents) {
                #expect(
                    try await send(client, key, OutcomeBatch(batch: UUID().uuidString, installation: "busy", events: full)).status == .ok)
            }
            let over = try await send(client, key, OutcomeBatch(batch: UUID().uuidString, installation: "busy", events: [full[0]]))
            #expect(over.status == .tooManyRequests && over.error?.code == .tooManyRequests)
            #expect(
                try await send(client, key, OutcomeBatch(batch: UUID().uuidString, installation: "quiet", events: [full[0]])).status == .ok,
                "another installation is not limited")

            try await client.createModel("birds")
            let birdsKey = try await client.appKey(models: ["birds"])
            let forbidden = try await send(client, birdsKey, OutcomeBatch(batch: UUID().uuidString, installation: "x", events: [full[0]]))
            #expect(forbidden.status == .forbidden)
            let noKey = try await send(client, [:], OutcomeBatch(batch: UUID().uuidString, installation: "x", events: [full[0]]))
            #expect(noKey.status == .unauthorized)
            let noModel = try await send(
                client, key, OutcomeBatch(batch: UUID().uuidString, installation: "x", events: []), model: "nothing")
            #expect(noModel.status == .notFound)
        }
    }

    /// Batches arriving together share a transaction; each still gets its own answer, and a
    /// refused one (a savepoint rolled back) takes none of its events with it, nor the others'.
    @Test(arguments: DepotBackend.allCases) func batchesWrittenTogetherAreAnsweredEachOnItsOwn(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            let (key, arm) = try await experiment(client)
            var devices: [(id: String, exposure: String)] = []
            for index in 0..<60 { devices.append(try await installation(on: index % 2 + 1, client, key, prefix: "device-\(index)")) }
            let answers = try await withThrowingTaskGroup(of: (Int, DepotError?).self) { [devices] group in
                for index in 0..<60 {
                    group.addTask {
                        // Every third names a version the model lacks (without a token, which would not check).
                        let version = index % 3 == 0 ? 7 : index % 2 + 1
                        let batch = OutcomeBatch(
                            batch: UUID().uuidString, installation: devices[index].id,
                            events: [.init(metric: "installed", version: version, arm: arm, at: Self.now)],
                            exposures: version == 7 ? [] : [.init(version: version, arm: arm, token: devices[index].exposure)])
                        return (index, try await send(client, key, batch).error)
                    }
                }
                return try await group.reduce(into: [Int: DepotError?]()) { $0[$1.0] = $1.1 }
            }
            #expect(answers.count == 60)
            for (index, error) in answers {
                #expect(error?.code == (index % 3 == 0 ? .invalidEvents : nil), "batch \(index): \(String(describing: error))")
            }
            let installations = try await results(client).arms.first?.installations
            #expect(installations == ["1": 20, "2": 20], "the 40 accepted batches, none of the refused ones")
        }
    }
}
