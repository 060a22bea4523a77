import Foundation
import ModelDepotShared
import Testing

@testable import ModelDepot

/// Where the SDK keeps its files: state never in purgeable space, moved there from the cache
/// directory once; a kept file that cannot be read is an error, never "absent".
@Suite struct StorageLocationsTests {
    let folder: ModelCacheTests.Folder
    var caches: URL { folder.url.appendingPathComponent("Library/Caches") }
    var support: URL { folder.url.appendingPathComponent("Library/Application Support/ModelDepot") }

    init() throws { folder = try ModelCacheTests.Folder() }

    @Test func stateOfACacheInsidePurgeableSpaceLivesInDurableSpaceUnderTheSameRelativePath() {
        let cache = caches.appendingPathComponent("models/main")
        let locations = StorageLocations.resolve(cache: cache, state: nil, purgeable: [caches], durable: support)
        #expect(locations.cache == cache)
        #expect(locations.state.standardizedFileURL.path == support.appendingPathComponent("state/models/main").standardizedFileURL.path)
        let whole = StorageLocations.resolve(cache: caches, state: nil, purgeable: [caches], durable: support)
        #expect(whole.state.standardizedFileURL.path == support.appendingPathComponent("state").standardizedFileURL.path)
    }

    @Test func stateOfACacheElsewhereStaysBesideTheModelsAndAGivenStateDirectoryWins() {
        let cache = support.appendingPathComponent("models")
        #expect(StorageLocations.resolve(cache: cache, state: nil, purgeable: [caches], durable: support).state == cache)
        let lookalike = folder.url.appendingPathComponent("Library/CachesNot/models")
        #expect(
            StorageLocations.resolve(cache: lookalike, state: nil, purgeable: [caches], durable: support).state == lookalike,
            "a folder whose name only begins like Caches is not inside it")
        let chosen = folder.url.appendingPathComponent("state")
        #expect(StorageLocations.resolve(cache: caches, state: chosen, purgeable: [caches], durable: support).state == chosen)
    }

    @Test func preparingMovesStateAnEarlierSDKKeptBesideTheModelsButNeverOverwrites() throws {
        let cache = caches.appendingPathComponent("models")
        try FileManager.default.createDirectory(at: cache.appendingPathComponent("trust"), withIntermediateDirectories: true)
        try Data("old-id".utf8).write(to: cache.appendingPathComponent("installation-id"))
        try Data("{}".utf8).write(to: cache.appendingPathComponent("trust/state.json"))
        try Data("queue".utf8).write(to: cache.appendingPathComponent("outcomes.json"))
        let locations = StorageLocations.resolve(cache: cache, state: nil, purgeable: [caches], durable: support)
        try FileManager.default.createDirectory(at: locations.state, withIntermediateDirectories: true)
        try Data("kept".utf8).write(to: locations.state.appendingPathComponent("outcomes.json"))

        try locations.prepare()

        #expect(try String(contentsOf: locations.state.appendingPathComponent("installation-id"), encoding: .utf8) == "old-id")
        #expect(try String(contentsOf: locations.state.appendingPathComponent("trust/state.json"), encoding: .utf8) == "{}")
        #expect(try String(contentsOf: locations.state.appendingPathComponent("outcomes.json"), encoding: .utf8) == "kept")
        #expect(!FileManager.default.fileExists(atPath: cache.appendingPathComponent("installation-id").path))
        #expect(FileManager.default.fileExists(atPath: cache.appendingPathComponent("models").path))
        #expect(FileManager.default.fileExists(atPath: cache.appendingPathComponent("partial").path))
    }

    @Test func aMissingFileIsAbsentAndAnUnreadableOneIsAnError() throws {
        #expect(try StoredFile.contents(of: folder.url.appendingPathComponent("nothing")) == nil)
        #expect(try StoredFile.contents(of: folder.url.appendingPathComponent("nothing/below")) == nil)
        let file = folder.url.appendingPathComponent("state.json")
        try StoredFile.write(Data("{\"a\":1}".utf8), to: file)
        #expect(try StoredFile.contents(of: file) == Data("{\"a\":1}".utf8))
        // A directory where the file belongs exists and cannot be read as a file: EISDIR, as
        // EACCES before the first unlock (the tests run as root, for whom permissions do not hold).
        let blocked = folder.url.appendingPathComponent("blocked.json")
        try FileManager.default.createDirectory(at: blocked, withIntermediateDirectories: true)
        #expect(throws: DepotError.self) { try StoredFile.contents(of: blocked) }
        do {
            _ = try StoredFile.contents(of: blocked)
        } catch {
            #expect(error.code == .storageUnreadable)
            #expect(error.message.contains("'\(blocked.path)' exists but could not be read"))
        }
    }

    @Test func aTrustStateThatCannotBeReadStopsTheStoreInsteadOfResettingIt() throws {
        let store = TrustStore(stateDirectory: folder.url, pinned: .publicKey("AAAA"))
        var state = try store.state()
        state.manifestVersions["flowers"] = 7
        try store.save(state)
        #expect(try store.state().manifestVersions["flowers"] == 7)
        try FileManager.default.removeItem(at: store.directory.appendingPathComponent("state.json"))
        try FileManager.default.createDirectory(at: store.directory.appendingPathComponent("state.json"), withIntermediateDirectories: true)
        #expect(throws: DepotError.self) { try store.state() }
        #expect(throws: DepotError.self) { try store.root() }
    }
}
