import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotRollouts
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepotServer

/// `/v1/admin/models/{name}/rollout/guards`: what starts a guard, what is refused (with the
/// rollout and the guards left as they were), and how a guard owns its rule until it is stopped.
@Suite struct RolloutGuardAPITests {
    func prepare(_ client: TestServer.Client, split: [Int: Int] = [1: 10_000]) async throws {
        try await client.createModel("flowers")
        _ = try await client.upload("float_classifier", to: "flowers")
        _ = try await client.upload("int8_conv", to: "flowers")
        _ = try await client.upload("float_classifier", to: "flowers", query: "publish=false")
        let shares = split.sorted { $0.key < $1.key }.map { RolloutRuleChange.Share(version: $0.key, basisPoints: $0.value) }
        let response = try await client.json(
            .put, "/v1/admin/models/flowers/rollout/rules/main", RolloutRuleChange(conditions: [], shares: shares))
        #expect(response.status == .ok)
    }

    func state(_ client: TestServer.Client) async throws -> (Rollout, [RolloutGuard], Int) {
        let rollout = try await client.request(.get, "/v1/admin/models/flowers/rollout").decode(Rollout.self)
        let guards = try await client.request(.get, "/v1/admin/models/flowers/rollout/guards").decode(RolloutGuards.self).guards
        let history = try await client.request(.get, "/v1/admin/models/flowers/rollout/history").decode(RolloutHistory.self).changes.count
        return (rollout, guards, history)
    }

    func start(_ client: TestServer.Client, _ body: String, rule: String = "main") async throws -> TestServer.Response {
        try await client.request(.put, "/v1/admin/models/flowers/rollout/guards/\(rule)", body: ByteBuffer(string: body))
    }

    @Test(arguments: DepotBackend.allCases) func badStartsAreRefusedWithTheirReasonAndChangeNothing(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            try await prepare(client)
            let before = try await state(client)
            let refused: [(body: String, rule: String, status: HTTPResponse.Status, says: String)] = [
                (#"{"to": 2}"#, "other", .notFound, "no rule named 'other'"),
                (#"{"to": 1}"#, "main", .badRequest, "already gives every device version 1"),
                (#"{"to": 9}"#, "main", .badRequest, "has no published version 9"),
                (#"{"to": 3}"#, "main", .badRequest, "has no published version 3"),
                (#"{"to": "2"}"#, "main", .badRequest, "to"),
                (#"{"to": 99999999999999999999999}"#, "main", .badRequest, "99999999999999999999999 at 'to'"),
                (
                    #"{"to": 2, "settings": {"stages": [500, 100, 10000]}}"#, "main", .badRequest,
                    "Stage 2 (1 %) is not above the stage before"
                ),
                (#"{"to": 2, "settings": {"stages": [100, 500]}}"#, "main", .badRequest, "The last stage is 5 %, not 100 %"),
                (#"{"to": 2, "settings": {"stages": []}}"#, "main", .badRequest, "1 to 20 stages"),
                (#"{"to": 2, "settings": {"stages": [0, 10000]}}"#, "main", .badRequest, "Stage 1 (0 %)"),
                (#"{"to": 2, "settings": {"stageSeconds": 5}}"#, "main", .badRequest, "5 seconds is outside 1 minute to 30 days"),
                (#"{"to": 2, "settings": {"minimumInstallations": -1}}"#, "main", .badRequest, "Minimum installations -1"),
                (#"{"to": 2, "settings": {"onRegression": "panic"}}"#, "main", .badRequest, "invalid value at 'settings.onRegression'"),
                (
                    #"{"to": 2, "settings": {"webhook": "ftp://hooks.example/x"}, "webhookSecret": "0123456789abcdef"}"#, "main",
                    .badRequest, "not an http or https URL"
                ),
                (
                    #"{"to": 2, "settings": {"webhook": "https://hooks.example/x"}}"#, "main", .badRequest,
                    "needs a secret of 16 to 256 bytes"
                ),
                (
                    #"{"to": 2, "settings": {"webhook": "https://hooks.example/x"}, "webhookSecret": "short"}"#, "main", .badRequest,
                    "16 to 256 bytes"
                ),
                (#"{"to": 2, "webhookSecret": "0123456789abcdef"}"#, "main", .badRequest, "without a webhook URL"),
                ("\u{0}\u{ff}{", "main", .badRequest, "JSON"),
                (#"{"to": 2}"#, "Bad Rule", .badRequest, "Rule name"),
            ]
            for attempt in refused {
                let response = try await start(client, attempt.body, rule: attempt.rule.replacingOccurrences(of: " ", with: "%20"))
                #expect(response.status == attempt.status, "\(attempt.body): \(response.status) \(response.text)")
                #expect(response.error?.message.contains(attempt.says) == true, "\(attempt.body): \(response.text)")
                let after = try await state(client)
                #expect(after.0 == before.0 && after.1 == before.1 && after.2 == before.2, "\(attempt.body) changed nothing")
            }
        }
    }

    @Test(arguments: DepotBackend.allCases) func aRuleThatSplitsAmongVersionsIsNotGuarded(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            try await prepare(client, split: [1: 9_000, 2: 1_000])
            let response = try await start(client, #"{"to": 2}"#)
            #expect(response.status == .conflict)
            #expect(
                response.error?.message.contains("splits its devices among version 1 (90 %), version 2 (10 %)") == true, "\(response.text)")
            #expect(try await state(client).1.isEmpty)
        }
    }

    @Test(arguments: DepotBackend.allCases) func aGuardOwnsItsRuleUntilItIsStopped(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            try await prepare(client)
            let response = try await start(client, #"{"to": 2, "settings": {"stages": [1000, 10000], "stageSeconds": 600}}"#)
            #expect(response.status == .created, "\(response.text)")
            let started = try response.decode(RolloutGuard.self)
            #expect(started.state == .running && started.control == 1 && started.target == 2 && started.share == 1_000)
            #expect(started.moves.map(\.kind) == [.started] && started.moves[0].by != "guard")
            #expect(started.settings.minimumInstallations == RolloutGuardSettings.defaultMinimumInstallations)
            let (rollout, _, history) = try await state(client)
            #expect(rollout.rules[0].split.shares == [1: 9_000, 2: 1_000])

            let again = try await start(client, #"{"to": 2}"#)
            #expect(again.status == .conflict && again.error?.message.contains("already guarded") == true, "\(again.text)")
            let byHand = try await client.json(
                .put, "/v1/admin/models/flowers/rollout/rules/main",
                RolloutRuleChange(conditions: [], shares: [.init(version: 2, basisPoints: 10_000)]))
            #expect(byHand.status == .conflict)
            #expect(byHand.error?.message.contains("under a guarded rollout of version 2 (running at 10 %)") == true, "\(byHand.text)")
            let removal = try await client.request(.delete, "/v1/admin/models/flowers/rollout/rules/main")
            #expect(removal.status == .conflict)
            let resume = try await client.request(.post, "/v1/admin/models/flowers/rollout/guards/main/resume")
            #expect(resume.status == .conflict && resume.error?.message.contains("not paused") == true)
            let unknown = try await client.request(.post, "/v1/admin/models/flowers/rollout/guards/other/resume")
            #expect(unknown.status == .notFound)
            let unchanged = try await state(client)
            #expect(unchanged.0 == rollout && unchanged.2 == history, "the refused changes changed nothing")

            // Without any outcome the guard holds: no installations on version 2 yet.
            let reviewed = try await client.request(.post, "/v1/admin/models/flowers/rollout/guards/review").decode(RolloutGuards.self)
            #expect(reviewed.guards[0].state == .running && reviewed.guards[0].lastCheck?.targetInstallations == 0)

            let stopped = try await client.request(.delete, "/v1/admin/models/flowers/rollout/guards/main")
            #expect(stopped.status == .ok)
            #expect(try stopped.decode(RolloutGuard.self).state == .stopped)
            #expect(try await client.request(.delete, "/v1/admin/models/flowers/rollout/guards/main").status == .conflict)
            let changed = try await client.json(
                .put, "/v1/admin/models/flowers/rollout/rules/main",
                RolloutRuleChange(conditions: [], shares: [.init(version: 2, basisPoints: 10_000)]))
            #expect(changed.status == .ok, "a stopped guard lets people change the rule: \(changed.text)")

            // The console's rollout page: the guard's stages, where it stopped, and each move.
            let (cookie, _) = try await ConsoleTests.signIn(client)
            let page = ConsoleRolloutTests.decoded(try await client.request(.get, "/console/models/flowers/rollout", headers: cookie).text)
            #expect(page.contains("Rule 'main': v2 against v1") && page.contains("Stopped at 10 %"), "\(page)")
            #expect(page.contains(#"<li class="stage-failed">10 % <span class="hint">stopped here</span></li>"#))
            #expect(page.contains(#"<li class="stage-next">100 % <span class="hint">not reached</span></li>"#))
            let moves = page.matches(of: /<li><time>[^<]+<\/time> <strong>([a-z ]+)<\/strong> by key [^:]+: ([^<]+)<\/li>/).map {
                String($0.1)
            }
            #expect(moves == ["started", "stopped"], "\(moves)")
            #expect(page.contains("Stopped by hand at 10 %; the rule keeps its split."))
            #expect(
                page.contains("<td data-label=\"Why\">Started rolling out version 2 in rule 'main' at 10 %, against version 1.</td>"),
                "the history's Why column")
        }
    }

    @Test(arguments: DepotBackend.allCases) func onlyAdminsManageGuards(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            try await prepare(client)
            let app = try await client.appKey()
            for (method, path) in [
                (HTTPRequest.Method.get, "guards"), (.put, "guards/main"), (.post, "guards/review"), (.delete, "guards/main"),
            ] {
                let response = try await client.request(
                    method, "/v1/admin/models/flowers/rollout/\(path)", headers: app,
                    body: ByteBuffer(string: #"{"to": 2}"#))
                #expect(response.status == .forbidden, "\(method) \(path): \(response.status)")
            }
            #expect(try await state(client).1.isEmpty)
        }
    }
}
