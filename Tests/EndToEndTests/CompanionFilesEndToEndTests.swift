import Foundation
import ModelDepot
import ModelDepotShared
import TestSupport
import Testing

/// An AutoML Vision Edge export uploaded with the real CLI, downloaded by the SDK through real
/// URLSession: the model and its companion files are verified against the signed manifest and
/// installed as one version, and a tampered file keeps the previous version whole.
@Suite struct CompanionFilesEndToEndTests {
    static let automl = Binaries.repository.appendingPathComponent("Tests/Fixtures/automl/object_detection")

    func publish() async throws -> PublishedModel {
        let published = try await PublishedModel([])
        let uploaded = try await Command.depot(
            ["upload", "flowers", Self.automl.path, "--publish"], environment: published.server.environment)
        #expect(uploaded.status == 0, "\(uploaded.error)")
        #expect(uploaded.text.contains("with 'labels', 'automl'"))
        return published
    }

    @Test func automlExportArrivesWithItsLabelsAndSettings() async throws {
        let published = try await publish()
        let downloader = try published.downloader { $0.downloadChunkSize = 100 }
        let model = try await downloader.model(named: "flowers")
        #expect(model.companionFileNames == ["automl", "labels"])
        #expect(model.labels == ["red", "green", "blue"], "from dict.txt: the model has no metadata")
        #expect(model.metadata == nil)
        let settings = try #require(model.companionFile(named: "automl"))
        #expect(try Data(contentsOf: settings) == Data(contentsOf: Self.automl.appendingPathComponent("tflite_metadata.json")))
        #expect(model.companionFile(named: "nothing") == nil)

        // A new start reads the same installation back.
        let again = try published.downloader()
        let cached = try await again.model(named: "flowers", policy: .localModel)
        #expect(cached.labels == ["red", "green", "blue"])
        #expect(cached.companionFile(named: "automl").map { try? Data(contentsOf: $0) } == (try Data(contentsOf: settings)))
    }

    @Test func metadataLabelsComeFromTheModelItself() async throws {
        let published = try await PublishedModel(["metadata/image_classifier"])
        let model = try await published.downloader().model(named: "flowers")
        #expect(model.labels == ["red", "green", "blue", "dark", "bright"])
        #expect(model.metadata?.subgraphs.first?.inputs.first?.normalization?.mean == [127.5])
        #expect(model.companionFileNames.isEmpty)
    }

    @Test func aTamperedCompanionFileKeepsThePreviousVersionWhole() async throws {
        let published = try await publish()
        try await AttackerProxy.running(in: published.server.url) { proxy in
            let downloader = try published.downloader { $0.serverURL = proxy.url }
            let first = try await downloader.model(named: "flowers")
            #expect(first.version == 1)

            let labels = published.scratch.path("labels.txt")
            try Data("cat\ndog\n".utf8).write(to: URL(fileURLWithPath: labels))
            let second = try await Command.depot(
                [
                    "upload", "flowers", Self.automl.appendingPathComponent("model.tflite").path,
                    "--file", "labels=\(labels)", "--publish", "--json",
                ], environment: published.server.environment
            )
            .decode(ModelVersion.self)
            let path = "/v1/blobs/sha256/\(second.files[0].sha256)"
            proxy.take(path, .response(status: .ok, headers: ["Content-Length": "8"], body: Data("cow\ndog\n".utf8)))
            let tampered = await #expect(throws: DepotError.self) { try await downloader.model(named: "flowers") }
            #expect(tampered?.code == .digestMismatch)
            let kept = try await downloader.model(named: "flowers", policy: .localModel)
            #expect(kept.version == 1)
            #expect(kept.labels == ["red", "green", "blue"], "the old version's labels, not the new ones")

            proxy.release(path)
            let updated = try await downloader.model(named: "flowers")
            #expect(updated.version == 2)
            #expect(updated.labels == ["cat", "dog"])
            #expect(updated.companionFileNames == ["labels"])
        }
    }

    @Test func theCLIRefusesBadCompanionFilesBeforeSending() async throws {
        let published = try await PublishedModel([])
        let model = Self.automl.appendingPathComponent("model.tflite").path
        let badName = try await Command.depot(
            ["upload", "flowers", model, "--file", "Labels=\(model)"], environment: published.server.environment)
        #expect(badName.status == 1)
        #expect(badName.error.contains("Companion file name 'Labels' is not allowed"))
        let missing = try await Command.depot(
            ["upload", "flowers", model, "--file", "labels=/nonexistent"], environment: published.server.environment)
        #expect(missing.status == 1)
        #expect(missing.error.contains("cannot be read"))
        let notJSON = try await Command.depot(
            ["upload", "flowers", model, "--file", "automl=\(model)"], environment: published.server.environment)
        #expect(notJSON.error.contains("is not a JSON object"))
        let wrongShape = published.scratch.path("settings.json")
        try Data(#"{"inputShape": [1, 320, 320, 3]}"#.utf8).write(to: URL(fileURLWithPath: wrongShape))
        let mismatch = try await Command.depot(
            ["upload", "flowers", model, "--file", "automl=\(wrongShape)"], environment: published.server.environment)
        #expect(mismatch.error.contains("gives input shape [1, 320, 320, 3]"))
        let versions = try await Command.depot(["versions", "flowers", "--json"], environment: published.server.environment).decode(
            ModelVersionList.self)
        #expect(versions.versions.isEmpty)
    }
}
