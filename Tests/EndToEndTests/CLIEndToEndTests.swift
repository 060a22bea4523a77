import Foundation
import ModelDepotShared
import Testing

/// The real `depot` CLI against a real `depot serve`.
@Suite struct CLIEndToEndTests {
    /// Every command's `--help` starts with examples of that command (as `gh`'s do; a default
    /// subcommand's may leave its name out); the tree is read from ArgumentParser's own dump, so a
    /// new command without them fails here.
    @Test func everyCommandsHelpHasExamplesOfItself() async throws {
        let dump = try await Command.depot(["--experimental-dump-help"], environment: [:])
        let root = try #require(try JSONSerialization.jsonObject(with: dump.output) as? [String: Any])
        var leaves: [(path: String, discussion: String)] = []
        func walk(_ command: [String: Any], _ path: [String]) {
            let subcommands = command["subcommands"] as? [[String: Any]] ?? []
            if subcommands.isEmpty, path.last != "help" {
                leaves.append((path.joined(separator: " "), command["discussion"] as? String ?? ""))
            }
            for subcommand in subcommands { walk(subcommand, path + [subcommand["commandName"] as? String ?? "?"]) }
        }
        walk(try #require(root["command"] as? [String: Any]), ["depot"])
        #expect(leaves.count >= 40, "\(leaves.map(\.path))")
        for leaf in leaves {
            #expect(
                leaf.discussion.hasPrefix("Examples:")
                    && (leaf.discussion.contains("\n  \(leaf.path) ") || leaf.discussion.contains("\n  \(leaf.path)\n")
                        || leaf.path == "depot rollout guard start" && leaf.discussion.contains("\n  depot rollout guard ")),
                "'\(leaf.path) --help' has no examples of itself: \(leaf.discussion.prefix(200))")
        }
    }

    @Test func modelLifecycleThroughTheCLI() async throws {
        let scratch = try Scratch()
        let server = try await ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        let env = server.environment

        await #expect(
            try Command.depot(["models", "create", "flowers", "--description", "Flowers", "--tag", "vision"], environment: env).status == 0)
        let list = try await Command.depot(["models", "list", "--json"], environment: env)
        #expect(try list.decode(ModelList.self).models.map(\.name.rawValue) == ["flowers"])

        let upload = try await Command.depot(
            ["upload", "flowers", Binaries.fixture("float_classifier"), "--notes", "v1", "--json"], environment: env)
        #expect(upload.status == 0, "\(upload.error)")
        let first = try upload.decode(ModelVersion.self)
        #expect(first.version == 1 && !first.published && first.notes == "v1")
        #expect(upload.error.isEmpty, "no progress bar without a terminal: \(upload.error)")

        await #expect(
            try Command.depot(["publish", "flowers", "1"], environment: env).text
                .hasPrefix("Published 'flowers' version 1.\nEvery device now gets it: the rollout has no default"))
        let second = try await Command.depot(["upload", "flowers", Binaries.fixture("int8_conv"), "--publish"], environment: env)
        #expect(second.text.hasPrefix("Uploaded 'flowers' version 2 ("))
        let versions = try await Command.depot(["versions", "flowers", "--json"], environment: env).decode(ModelVersionList.self)
        #expect(versions.versions.map(\.version) == [2, 1])
        #expect(versions.versions.allSatisfy { $0.published })

        await #expect(try Command.depot(["unpublish", "flowers", "2"], environment: env).status == 0)
        await #expect(try Command.depot(["delete-version", "flowers", "2"], environment: env).status == 0)
        let show = try await Command.depot(["models", "show", "flowers", "--json"], environment: env).decode(ModelSummary.self)
        #expect(show.versionCount == 1 && show.publishedVersion == 1)

        let version = try await Command.depot(["--version"], environment: [:])
        #expect(version.status == 0 && version.text == "\(modelDepotVersion)\n", "\(version.text) \(version.error)")
        let health = try await Command.curl(["\(server.url.absoluteString)/healthz"]).text
        #expect(health.contains("\"version\":\"\(modelDepotVersion)\""), "the server says which version it runs: \(health)")

        let refused = try await Command.depot(["models", "delete", "flowers"], environment: env)
        #expect(refused.status == 1)
        #expect(refused.error.contains("depot models delete flowers --force"))
        await #expect(try Command.depot(["models", "delete", "flowers", "--force"], environment: env).status == 0)
    }

    @Test func keysAreCreatedListedAndRevoked() async throws {
        let scratch = try Scratch()
        let server = try await ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        let env = server.environment
        try await Command.depot(["models", "create", "flowers"], environment: env).succeeded()
        try await Command.depot(["upload", "flowers", Binaries.fixture("float_classifier"), "--publish"], environment: env).succeeded()

        let created = try await Command.depot(["keys", "create", "--app", "--model", "flowers", "--json"], environment: env)
        let key = try created.decode(CreatedAccessKey.self)
        #expect(key.kind == .app && key.models?.map(\.rawValue) == ["flowers"])
        let manifest = "\(server.url.absoluteString)/v1/models/flowers/manifest"
        await #expect(
            try Command.curl(["-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer \(key.secret)", manifest]).text == "200"
        )

        let list = try await Command.depot(["keys", "list", "--json"], environment: env)
        #expect(!list.text.contains(key.secret))
        #expect(try list.decode(AccessKeyList.self).keys.count == 2)

        await #expect(try Command.depot(["keys", "revoke", key.id], environment: env).status == 0)
        await #expect(
            try Command.curl(["-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer \(key.secret)", manifest]).text == "401"
        )
        let usage = try await Command.depot(["keys", "create", "--model", "flowers"], environment: env)
        #expect(usage.status == 1)
        #expect(usage.error.contains("--model limits app keys only; add --app."))
    }

    @Test func loginSavesServerAndTokenForLaterCommands() async throws {
        let scratch = try Scratch()
        let server = try await ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        let config = ["DEPOT_CONFIG": scratch.path("config.json")]
        let wrong = try await Command.depot(
            ["login", "--server", server.url.absoluteString, "--token", "wrong-token-000000000"], environment: config)
        #expect(wrong.status == 1)
        #expect(wrong.error.contains("The API key is not valid"))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("config.json")))

        let login = try await Command.depot(
            ["login", "--server", server.url.absoluteString, "--token", ServerProcess.adminToken], environment: config)
        #expect(login.status == 0, "\(login.error)")
        let attributes = try FileManager.default.attributesOfItem(atPath: scratch.path("config.json"))
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        await #expect(try Command.depot(["models", "list"], environment: config).status == 0)
    }

    @Test func rejectedInputExitsOneAndServerFailureExitsTwo() async throws {
        let scratch = try Scratch()
        let server = try await ServerProcess(storage: scratch.url.appendingPathComponent("storage"), maximumUploadSize: 1 << 20)
        let env = server.environment
        try await Command.depot(["models", "create", "flowers"], environment: env).succeeded()

        // The server refuses on the head and closes while the CLI is still sending the body.
        try CrashSafetyTests.largeModel(scratch.path("large.tflite"), megabytes: 6, seed: 2)
        let tooLarge = try await Command.depot(["upload", "flowers", scratch.path("large.tflite")], environment: env)
        #expect(tooLarge.status == 1, "\(tooLarge.error)")
        #expect(tooLarge.error.contains("this server accepts at most 1048576"), "\(tooLarge.error)")
        let invalid = try await Command.depot(["upload", "flowers", Binaries.fixture("invalid/negative_dimension")], environment: env)
        #expect(invalid.status == 1)
        #expect(invalid.error.contains("error: Model.subgraphs[0].tensors[0].shape[1] is -4"))
        let badName = try await Command.depot(["models", "create", "Not Valid"], environment: env)
        #expect(badName.status == 1)
        #expect(badName.error.contains("is not allowed"))
        let missingFile = try await Command.depot(["upload", "flowers", scratch.path("absent.tflite")], environment: env)
        #expect(missingFile.status == 1)
        #expect(missingFile.error.contains("absent.tflite' does not exist"))
        let unknownCommand = try await Command.depot(["frobnicate"], environment: env)
        #expect(unknownCommand.status == 1)

        try await server.stop(signal: SIGTERM)
        let unreachable = try await Command.depot(["models", "list"], environment: env)
        #expect(unreachable.status == 2)
        #expect(unreachable.error.contains("Could not reach the server at \(server.url.absoluteString)"))
        let unreachableUpload = try await Command.depot(["upload", "flowers", Binaries.fixture("float_classifier")], environment: env)
        #expect(unreachableUpload.status == 2)
        #expect(
            unreachableUpload.error.contains(
                "Could not reach the server at \(server.url.absoluteString.dropLast(server.url.absoluteString.hasSuffix("/") ? 1 : 0))"),
            "\(unreachableUpload.error)")
    }
}
