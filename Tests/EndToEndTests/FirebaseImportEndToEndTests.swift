import Foundation
import ModelDepotRollouts
import ModelDepotShared
import TestSupport
import Testing

/// `depot import firebase` against a real server, from what a Firebase project hands out: a
/// bulk-download folder and the Firebase ML API's `Model` resources (Tests/Fixtures/firebase).
@Suite struct FirebaseImportEndToEndTests {
    static let resources = Binaries.repository.appendingPathComponent("Tests/Fixtures/firebase/models.json").path

    /// The folder the console's bulk download writes, with the files `models.json` lists (Birds'
    /// under the name its `gcsTfliteUri` gives), one broken file and one the JSON does not list.
    static func hostedModels(in scratch: Scratch, _ files: [String: String]) throws -> String {
        let folder = scratch.url.appendingPathComponent("hosted_models")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, fixture) in files {
            try FileManager.default.copyItem(at: URL(fileURLWithPath: Binaries.fixture(fixture)), to: folder.appendingPathComponent(name))
        }
        return folder.path
    }

    func models(_ server: ServerProcess) async throws -> [String: ModelSummary] {
        let list = try await Command.depot(["models", "list", "--json"], environment: server.environment).succeeded().decode(ModelList.self)
        return Dictionary(uniqueKeysWithValues: list.models.map { ($0.name.rawValue, $0) })
    }

    @Test func aProjectImportsAsDevicesGotItAndImportingAgainChangesNothing() async throws {
        let scratch = try Scratch()
        let server = try await ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        _ = try await server.initializeRoot(keyFile: scratch.path("root.key"))
        let folder = try Self.hostedModels(
            in: scratch,
            [
                "flower_classifier.tflite": "float_classifier_labels", "birds.tflite": "float_classifier",
                "broken.tflite": "invalid/no_subgraphs", "extra.tflite": "float_classifier",
            ])
        let arguments = ["import", "firebase", folder, "--models", Self.resources]

        let dryRun = try await Command.depot(arguments + ["--dry-run"], environment: server.environment)
        #expect(dryRun.status == 1, "a file that fails verification is reported: \(dryRun.error)")
        #expect(dryRun.text.contains("would be created with version 1 (published, the rollout's default)"), "\(dryRun.text)")
        #expect(dryRun.text.contains("no_subgraphs") && dryRun.text.contains("extra.tflite"), "\(dryRun.text)")
        await #expect(try models(server).isEmpty, "a dry run changes nothing")

        let run = try await Command.depot(arguments, environment: server.environment)
        #expect(run.status == 1 && run.error.contains("1 of 3 Firebase models were not imported"), "\(run.text) \(run.error)")
        let imported = try await models(server)
        #expect(Set(imported.keys) == ["flower_classifier", "birds"], "the broken model left nothing behind")
        let flowers = try #require(imported["flower_classifier"])
        #expect(
            flowers.tags == ["vision", "prod"] && flowers.publishedVersion == 1
                && flowers.description.contains("projects/demo-flowers/models/12928414"))
        #expect(imported["birds"]?.publishedVersion == nil && imported["birds"]?.latestVersion == 1, "unpublished as it was")
        let rollout = try await Command.depot(["rollout", "show", "flower_classifier", "--json"], environment: server.environment)
            .succeeded()
            .decode(Rollout.self)
        #expect(rollout.defaultVersion == 1)

        // A device gets exactly the file it got from Firebase, as the rollout's default.
        let appKey = try await Command.depot(["keys", "create", "--app", "--json"], environment: server.environment).decode(
            CreatedAccessKey.self
        )
        .secret
        let manifest = try await Command.curl([
            "--fail", "-H", "Authorization: Bearer \(appKey)", "-H", "Depot-Installation-ID: 4b0e2f9a-6d1c-4f0b-9a57-2c3e8d1f6a90",
            "\(server.url.absoluteString)/v1/models/flower_classifier/manifest",
        ]).succeeded().manifest()
        let original = try TFLiteInspection(fileAt: Binaries.fixture("float_classifier_labels"))
        #expect(manifest.version == 1 && manifest.sha256 == original.sha256 && manifest.arm == "default")

        let again = try await Command.depot(arguments + ["--json"], environment: server.environment)
        let results = try JSONDecoder().decode([ImportResult].self, from: again.output)
        #expect(results.map(\.outcome).filter { $0.hasPrefix("already imported as version 1") }.count == 2, "\(again.text)")
        await #expect(try models(server).mapValues(\.versionCount) == ["flower_classifier": 1, "birds": 1])
    }

    struct ImportResult: Decodable {
        var firebaseModel: String
        var imported: Bool
        var outcome: String
    }

    @Test func withoutTheResourcesEachFileIsAPublishedModelAndNamesThatCollideOrExistAreLeftAlone() async throws {
        let scratch = try Scratch()
        let server = try await ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        let folder = try Self.hostedModels(
            in: scratch,
            [
                "Flowers.tflite": "float_classifier", "flowers.tflite": "float_classifier_labels",
                "cats.tflite": "float_classifier", "dogs.tflite": "float_classifier",
            ])
        try await Command.depot(["models", "create", "dogs"], environment: server.environment).succeeded()
        try await Command.depot(["upload", "dogs", Binaries.fixture("int8_conv"), "--publish"], environment: server.environment).succeeded()

        let run = try await Command.depot(["import", "firebase", folder, "--json"], environment: server.environment)
        #expect(run.status == 1)
        let results = Dictionary(
            uniqueKeysWithValues: try JSONDecoder().decode([ImportResult].self, from: run.output).map { ($0.firebaseModel, $0) })
        #expect(results["cats"]?.imported == true)
        #expect(results["Flowers"]?.outcome.contains("Several Firebase models become 'flowers'") == true, "\(results)")
        #expect(results["flowers"]?.imported == false)
        #expect(results["dogs"]?.outcome.contains("exists with other files") == true, "\(results)")
        let after = try await models(server)
        #expect(after["cats"]?.publishedVersion == 1 && after["flowers"] == nil)
        #expect(after["dogs"]?.versionCount == 1, "the existing model was left as it is")

        let unreachable = try await Command.depot(
            ["import", "firebase", folder, "--server", "http://127.0.0.1:1", "--token", "t"], environment: [:])
        #expect(unreachable.status == 2 && unreachable.error.contains("Could not reach the server"), "stops at once: \(unreachable.error)")
        let nothing = try await Command.depot(["import", "firebase"], environment: server.environment)
        #expect(nothing.status == 1 && nothing.error.contains("Give the bulk download's folder"), "\(nothing.error)")
        let notJSON = try await Command.depot(
            ["import", "firebase", folder, "--models", Binaries.fixture("float_classifier")], environment: server.environment)
        #expect(notJSON.status == 1 && notJSON.error.contains("holds no Firebase ML Model resources"), "\(notJSON.error)")
    }
}
