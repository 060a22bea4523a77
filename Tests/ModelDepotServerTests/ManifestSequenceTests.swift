import Foundation
import ModelDepotShared
@testable import ModelDepotServer
import Testing

/// Manifest versions in the catalog itself, without the clock's floor.
@Suite struct ManifestSequenceTests {
    @Test func aModelCreatedAgainContinuesItsNamesManifestVersions() async throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("depot-sequence-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: storage) }
        try FileManager.default.createDirectory(atPath: storage, withIntermediateDirectories: true)
        let catalog = try SQLiteModelCatalog(path: storage + "/depot.sqlite")
        let flowers = try ModelName("flowers")
        // Given a model that handed out versions 1 and 2
        _ = try await catalog.createModel(ModelCreation(name: flowers), at: Date())
        #expect(try await catalog.nextManifestVersion(of: flowers, notBelow: 0) == 1)
        #expect(try await catalog.nextManifestVersion(of: flowers, notBelow: 0) == 2)
        // When it is deleted and created again, its name's versions go on
        _ = try await catalog.deleteModel(flowers, force: true)
        _ = try await catalog.createModel(ModelCreation(name: flowers), at: Date())
        #expect(try await catalog.nextManifestVersion(of: flowers, notBelow: 0) == 3)
        // And a floor above the last one is taken as it is
        #expect(try await catalog.nextManifestVersion(of: flowers, notBelow: 1_000) == 1_000)
        #expect(try await catalog.nextManifestVersion(of: flowers, notBelow: 1_000) == 1_001)
        // A name with no model has no versions
        let error = await #expect(throws: DepotError.self) { try await catalog.nextManifestVersion(of: try ModelName("tulips"), notBelow: 0) }
        #expect(error?.code == .notFound)
    }
}
