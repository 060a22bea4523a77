import Foundation
import ModelDepotRollouts
import ModelDepotShared
import TestSupport
import Testing

/// Rollouts set through the real CLI, manifests fetched over HTTP for many devices. Serialized:
/// each test blocks a thread of the cooperative pool while its commands run, and two at once
/// would hold both of this machine's, which the in-process servers of other suites answer on.
@Suite(.serialized) struct RolloutEndToEndTests {
    @Test func rolloutThroughTheCLIDecidesWhatDevicesGet() async throws {
        let scratch = try Scratch()
        let server = try await ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        let env = server.environment
        try await Command.depot(["models", "create", "flowers"], environment: env).succeeded()
        for fixture in ["float_classifier", "int8_conv"] {
            try await Command.depot(["upload", "flowers", Binaries.fixture(fixture), "--publish"], environment: env).succeeded()
        }
        let key = try await Command.depot(["keys", "create", "--app", "--json"], environment: env).decode(CreatedAccessKey.self).secret
        func manifest(_ device: String, platform: String = "ios") async throws -> ModelManifest {
            try await Command.curl([
                "-H", "Authorization: Bearer \(key)", "-H", "Depot-Installation-ID: \(device)", "-H", "Depot-Platform: \(platform)",
                "\(server.url.absoluteString)/v1/models/flowers/manifest",
            ]).manifest()
        }

        let set = try await Command.depot(
            [
                "rollout", "set", "flowers", "--default", "1", "--split", "1=90,2=10", "--when", "platform=ios",
                "--rule", "ios-canary",
            ], environment: env)
        #expect(set.status == 0, "\(set.error)")
        #expect(set.text.contains("rule ios-canary ("))
        #expect(set.text.contains("platform=ios: v1 0-90%, v2 90-100%"))
        let rollout = try await Command.depot(["rollout", "show", "flowers", "--json"], environment: env).decode(Rollout.self)
        #expect(rollout.defaultVersion == 1)
        let rule = try #require(rollout.rules.first)

        var onTwo = 0
        for index in 0..<200 {
            let answer = try await manifest("device-\(index)")
            let bucket = RolloutBucket.bucket(salt: rule.salt, installationID: "device-\(index)")
            #expect(answer.version == (bucket >= 9_000 ? 2 : 1))
            if answer.version == 2 { onTwo += 1 }
        }
        #expect(onTwo > 0 && onTwo < 50)
        await #expect(try manifest("device-1", platform: "android").arm == "default")

        // 304 while nothing changes; any change to the model's rollout signs new manifests (a higher
        // manifest version), so the next answer is a 200 even when the device's assignment stayed.
        let headers = ["-H", "Authorization: Bearer \(key)", "-H", "Depot-Installation-ID: tester-1", "-H", "Depot-Platform: android"]
        let etag = try await #require(
            try Command.curl(["-D", "-", "-o", "/dev/null"] + headers + ["\(server.url.absoluteString)/v1/models/flowers/manifest"])
                .text.split(separator: "\r\n").first { $0.lowercased().hasPrefix("etag:") }?.dropFirst(6))
        func status() async throws -> String {
            try await Command.curl(
                ["-o", "/dev/null", "-w", "%{http_code}", "-H", "If-None-Match: \(etag)"] + headers
                    + ["\(server.url.absoluteString)/v1/models/flowers/manifest"]
            ).text
        }
        await #expect(try status() == "304")
        let before = try await manifest("tester-1", platform: "android")
        await #expect(try Command.depot(["rollout", "pin", "flowers", "someone-else", "2"], environment: env).status == 0)
        await #expect(try status() == "200")
        let after = try await manifest("tester-1", platform: "android")
        #expect(after.version == before.version && after.arm == before.arm)
        #expect(after.manifestVersion > before.manifestVersion)
        await #expect(try Command.depot(["rollout", "pin", "flowers", "Tester-1", "2"], environment: env).status == 0)
        await #expect(try manifest("tester-1", platform: "android").version == 2)
        await #expect(try Command.depot(["rollout", "unpin", "flowers", "tester-1"], environment: env).status == 0)
        await #expect(try Command.depot(["rollout", "remove-rule", "flowers", "ios-canary"], environment: env).status == 0)
        await #expect(try manifest("device-1").arm == "default")

        let bad = try await Command.depot(["rollout", "set", "flowers", "--split", "1=90,2=5"], environment: env)
        #expect(bad.status == 1)
        #expect(bad.error.contains("The shares add up to 95.0%, not 100%."))
        let usage = try await Command.depot(["rollout", "set", "flowers"], environment: env)
        #expect(usage.status == 1)
        #expect(usage.error.contains("Give --default VERSION, --split VERSION=PERCENT,..., or both."))

        let history = try await Command.depot(["rollout", "history", "flowers", "--json"], environment: env).decode(RolloutHistory.self)
        #expect(history.changes.count == 6)

        // Counted in memory, written when the server stops: still there after a restart.
        try await server.stop(signal: SIGTERM)
        let restarted = try await ServerProcess(storage: server.storage)
        let stats = try await Command.depot(["stats", "flowers", "--json"], environment: restarted.environment).decode(ModelStats.self)
        #expect(stats.versions.map(\.manifests).reduce(0, +) == 208)
        let text = try await Command.depot(["stats", "flowers"], environment: restarted.environment)
        #expect(text.status == 0)
        #expect(text.text.contains("ARM"))
    }

    /// What a new user tries: a split, then a request without an installation id, a publish, a
    /// second rule for everyone, a version that does not exist, a typo in a percentage.
    @Test func theCLISaysWhatAChangeDoesAndRefusesWhatCannotWork() async throws {
        let scratch = try Scratch()
        let server = try await ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        let env = server.environment
        try await Command.depot(["models", "create", "f"], environment: env).succeeded()
        let first = try await Command.depot(["upload", "f", Binaries.fixture("float_classifier"), "--publish"], environment: env)
        #expect(first.text.contains("Every device now gets it"), "\(first.text)")
        try await Command.depot(["upload", "f", Binaries.fixture("int8_conv"), "--publish"], environment: env).succeeded()
        try await Command.depot(["upload", "f", Binaries.fixture("dynamic_batch")], environment: env).succeeded()
        let key = try await Command.depot(["keys", "create", "--app", "--json"], environment: env).decode(CreatedAccessKey.self).secret
        func anonymous() async throws -> ModelManifest {
            try await Command.curl(["-H", "Authorization: Bearer \(key)", "\(server.url.absoluteString)/v1/models/f/manifest"]).manifest()
        }

        try await Command.depot(["rollout", "set", "f", "--split", "1=90,2=10"], environment: env).succeeded()
        await #expect(try anonymous().version == 1, "a request without an installation id gets the control")
        let published = try await Command.depot(["publish", "f", "3"], environment: env)
        #expect(published.text.contains("No device gets it yet: rule 'main' matches every device"), "\(published.text)")
        await #expect(try anonymous().version == 1)

        let shadowed = try await Command.depot(["rollout", "set", "f", "--split", "1=50,2=50", "--rule", "abtest"], environment: env)
        #expect(
            shadowed.status == 1 && shadowed.error.contains("Rule 'abtest' could never be used: rule 'main' comes before it"),
            "\(shadowed.error)")
        let both = try await Command.depot(
            ["rollout", "set", "f", "--default", "2", "--split", "1=50,2=50", "--rule", "abtest"], environment: env)
        #expect(both.status == 1 && both.error.contains("could never be used"), "\(both.error)")
        let afterBoth = try await Command.depot(["rollout", "show", "f", "--json"], environment: env).decode(Rollout.self)
        #expect(afterBoth.defaultVersion == nil && afterBoth.rules.map(\.name) == ["main"], "a refused split changed nothing")
        let unknown = try await Command.depot(["rollout", "set", "f", "--split", "1=90,2=10,4=0"], environment: env)
        #expect(unknown.status == 1 && unknown.error.contains("has no published version 4"), "\(unknown.error)")
        let kept = try await Command.depot(
            ["rollout", "set", "f", "--split", "1=50,2=50", "--rule", "abtest", "--allow-shadowed"], environment: env)
        #expect(
            kept.status == 0 && kept.text.contains("UNREACHABLE: rule 'main' before it takes all its devices"), "\(kept.text) \(kept.error)"
        )
        let show = try await Command.depot(["rollout", "show", "f"], environment: env).text
        #expect(show.contains("rule 'main' (all devices): with an installation id v1 90%, v2 10%; without one v1"), "\(show)")
        #expect(show.contains("rule 'abtest' (all devices): unreachable"), "\(show)")
        let guarded = try await Command.depot(["rollout", "guard", "f", "--rule", "abtest", "--to", "2"], environment: env)
        #expect(guarded.status == 1 && guarded.error.contains("a guard on it would watch no device"), "\(guarded.error)")

        for index in 0..<40 {
            _ = try await Command.curl([
                "-H", "Authorization: Bearer \(key)", "-H", "Depot-Installation-ID: d-\(index)",
                "\(server.url.absoluteString)/v1/models/f/manifest",
            ])
        }
        try await server.stop(signal: SIGTERM)
        let restarted = try await ServerProcess(storage: server.storage)
        let stats = try await Command.depot(["stats", "f"], environment: restarted.environment).text
        #expect(stats.contains("rule main") && stats.contains("rule abtest: unreachable"), "\(stats)")
        let abtestRows = stats.split(separator: "\n").filter { $0.hasPrefix("rule abtest ") }
        #expect(
            !abtestRows.isEmpty && abtestRows.allSatisfy { $0.contains("unreachable") && !$0.contains("not enough traffic") },
            "its sample-ratio check says it is unreachable: \(stats)")
        #expect(
            stats.contains("SAMPLE RATIO") && !stats.contains("[\"") && !stats.contains("rule:r-"),
            "aligned tables, rules by name: \(stats)")

        let typo = try await Command.depot(["rollout", "set", "f", "--split", "1=ninety"], environment: restarted.environment)
        #expect(typo.status == 1)
        #expect(
            typo.error.contains("Error: '1=ninety' is not VERSION=PERCENT") && typo.error.contains("Usage: depot rollout set ")
                && typo.error.contains("See 'depot rollout set --help'"), "the subcommand's usage: \(typo.error)")
        let misspelt = try await Command.depot(["rollout", "set", "f", "--splt", "1=90"], environment: restarted.environment)
        #expect(
            misspelt.status == 1 && misspelt.error.contains("Unknown option '--splt'")
                && misspelt.error.contains("Usage: depot rollout set "), "the typo is named, with its command's usage: \(misspelt.error)")
        var tokenless = restarted.environment
        tokenless["DEPOT_TOKEN"] = nil
        tokenless["DEPOT_CONFIG"] = scratch.url.appendingPathComponent("no-login.json").path
        let noToken = try await Command.depot(["models", "list"], environment: tokenless)
        #expect(
            noToken.status == 1 && noToken.error.contains("No admin token: pass --token")
                && noToken.error.contains("Usage: depot models list ") && !noToken.error.contains("SUBCOMMANDS"),
            "a missing token shows the command's usage, not the top level's: \(noToken.error)")
    }
}
