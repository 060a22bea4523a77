import Foundation
import ModelDepotShared
import Testing

/// `depot gc` against a real server: what no version references goes, what one does stays.
@Suite struct BlobCollectionEndToEndTests {
    @Test func depotGcRemovesWhatNoVersionReferences() async throws {
        let published = try await PublishedModel(["float_classifier"])
        let env = published.server.environment
        // A blob a crash left behind: in the store, named by no version
        let orphan = String(repeating: "ab", count: 32)
        let folder = published.server.storage.appendingPathComponent("blobs/sha256/ab")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("left over".utf8).write(to: folder.appendingPathComponent(orphan))

        let dry = try await Command.depot(["gc", "--dry-run", "--json"], environment: env)
        #expect(dry.status == 0, "\(dry.error)")
        #expect(try dry.decode(BlobCollection.self) == BlobCollection(removedBlobs: [orphan], removedUploads: 0, dryRun: true, busy: false))
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(orphan).path))

        let collected = try await Command.depot(["gc"], environment: env)
        #expect(collected.status == 0, "\(collected.error)")
        #expect(collected.text.contains("Removed 1 blob(s) no version references"))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(orphan).path))
        let versions = try await Command.depot(["versions", "flowers", "--json"], environment: env).decode(ModelVersionList.self)
        let kept = try #require(versions.versions.first?.sha256)
        #expect(
            FileManager.default.fileExists(
                atPath: published.server.storage.appendingPathComponent("blobs/sha256/\(kept.prefix(2))/\(kept)").path))
        await #expect(try Command.depot(["gc", "--json"], environment: env).decode(BlobCollection.self).removedBlobs.isEmpty)

        let app = try await Command.depot(
            ["gc"], environment: ["DEPOT_SERVER": published.server.url.absoluteString, "DEPOT_TOKEN": published.appKey])
        #expect(app.status == 1, "an app key may not collect")
    }
}
