import Crypto
import Foundation
import ModelDepotShared
import Testing

@testable import ModelDepot

/// The SDK's cache on a real folder: installing moves a verified file into its version's folder
/// and makes it current; older versions beyond `kept` go; a file changed on disk, or a companion
/// file gone, is never handed out as current.
@Suite struct ModelCacheTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Fixtures/tflite/float_classifier.tflite").standardizedFileURL
    /// A folder removed with the test.
    final class Folder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("model-cache-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    let folder: Folder
    let cache: ModelCache
    let flowers: ModelName
    var root: URL { folder.url }

    init() throws {
        folder = try Folder()
        flowers = try ModelName("flowers")
        cache = ModelCache(root: folder.url, verificationPolicy: .default)
    }

    /// A copy of the fixture to install as `version`, with its manifest and description.
    func download(_ version: Int, companions: [String: [UInt8]] = [:]) throws -> (URL, [String: URL], ModelManifest, TFLiteModelDescription)
    {
        let bytes = try Data(contentsOf: Self.fixture)
        let file = root.appendingPathComponent("download-\(version)")
        try bytes.write(to: file)
        var files: [String: URL] = [:]
        var entries: [ModelManifest.File] = []
        for (name, content) in companions {
            let url = root.appendingPathComponent("companion-\(version)-\(name)")
            try Data(content).write(to: url)
            files[name] = url
            entries.append(.init(name: name, sha256: SHA256.hash(data: content).hex, size: content.count, downloadURL: "/f"))
        }
        let description = try TFLiteVerifier().verify(Array(bytes))
        let manifest = ModelManifest(
            model: flowers, version: version, sha256: SHA256.hash(data: bytes).hex, size: bytes.count,
            downloadURL: "/v1/blobs/sha256/x", tensors: .init(inputs: description.inputs, outputs: description.outputs),
            files: entries, arm: "default", manifestVersion: version, issued: Date(timeIntervalSince1970: 0),
            expires: Date(timeIntervalSince1970: 86_400))
        return (file, files, manifest, description)
    }

    func install(_ version: Int, kept: Int = 2, companions: [String: [UInt8]] = [:]) throws -> VerifiedModel {
        let (file, files, manifest, description) = try download(version, companions: companions)
        return try cache.install(
            file, companions: files, manifest: manifest, description: description, etag: "\"e\(version)\"",
            confirmedAt: Date(timeIntervalSince1970: 10), kept: kept)
    }

    @Test func anInstalledVersionIsCurrentAndItsDownloadMovedIn() throws {
        let installed = try install(1, companions: ["labels.txt": Array("daisy\nrose\n".utf8)])
        #expect(
            !FileManager.default.fileExists(atPath: root.appendingPathComponent("download-1").path), "the download was moved, not copied")
        let current = try #require(try cache.current(flowers))
        #expect(current.model.version == 1 && current.model.sha256 == installed.sha256)
        #expect(current.cached.etag == "\"e1\"" && current.cached.confirmedAt == Date(timeIntervalSince1970: 10))
        #expect(try Data(contentsOf: current.model.fileURL) == Data(contentsOf: Self.fixture))
        #expect(try String(contentsOf: try #require(current.model.companionFiles["labels.txt"]), encoding: .utf8) == "daisy\nrose\n")
    }

    @Test func versionsBeyondKeptAreRemovedAndTheNewestIsCurrent() throws {
        for version in 1...3 { _ = try install(version, kept: 2) }
        let folders = try FileManager.default.contentsOfDirectory(atPath: cache.modelDirectory(flowers).path).filter { $0.hasPrefix("v") }
        #expect(folders.map { $0.prefix(3) }.sorted() == ["v2-", "v3-"])
        #expect(try cache.current(flowers)?.model.version == 3)
    }

    @Test func aFileOfAnotherSizeOnDiskIsNotCurrent() throws {
        let installed = try install(1)
        let handle = try FileHandle(forWritingTo: installed.fileURL)
        try handle.truncate(atOffset: UInt64(installed.manifest.size - 1))
        try handle.close()
        #expect(try cache.current(flowers) == nil, "a truncated model was handed out")
    }

    @Test func aMissingCompanionFileIsNotCurrent() throws {
        let installed = try install(1, companions: ["labels.txt": Array("daisy\n".utf8)])
        try FileManager.default.removeItem(at: try #require(installed.companionFiles["labels.txt"]))
        #expect(try cache.current(flowers) == nil)
    }

    @Test func aConfirmationRecordsWhenAndKeepsTheVersion() throws {
        _ = try install(1)
        let before = try #require(try cache.current(flowers))
        var renewed = before.cached
        renewed.etag = "\"e1-renewed\""
        let confirmed = try #require(try cache.confirm(flowers, renewed, at: Date(timeIntervalSince1970: 500)))
        #expect(confirmed.version == 1 && confirmed.confirmedAt == Date(timeIntervalSince1970: 500))
        #expect(try cache.current(flowers)?.cached.etag == "\"e1-renewed\"")
    }
}
