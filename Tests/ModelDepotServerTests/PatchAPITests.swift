import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepotServer

/// Patches made in the background when a version is published: from the published versions
/// before it, listed per version, offered in the signed manifest when worth it, served as blobs,
/// and gone with their versions.
@Suite struct PatchAPITests {
    static func server(_ backend: DepotBackend, sources: Int = 3) async throws -> TestServer {
        var server = try await TestServer(backend)
        server.configuration.patchSources = sources
        return server
    }

    /// The version's patches once there are `count` of them (the server makes them in the
    /// background; this asks every 20 ms, for at most 20 s).
    static func patches(_ client: TestServer.Client, _ model: String, _ version: Int, count: Int) async throws -> [VersionPatch] {
        try await polled(within: 20) {
            try await client.request(.get, "/v1/admin/models/\(model)/versions/\(version)/patches").decode(VersionPatchList.self).patches
        } until: {
            $0.count >= count
        }
    }

    static func patched(_ old: [UInt8], with patch: [UInt8], size: Int) throws -> [UInt8] {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("patched-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        try patch.withUnsafeBytes { patch in
            try old.withUnsafeBytes { old in
                try Patch.apply(patch, to: old, newSize: size, output: handle, temporaryDirectory: FileManager.default.temporaryDirectory)
            }
        }
        try handle.close()
        return Array(try Data(contentsOf: output))
    }

    @Test(arguments: DepotBackend.allCases) func aPublishedVersionGetsAPatchFromTheOneBeforeOfferedInItsManifest(_ backend: DepotBackend)
        async throws
    {
        try await Self.server(backend).run { client in
            try await client.createModel("flowers")
            let first = try await client.upload("float_classifier", to: "flowers").decode(ModelVersion.self)
            let second = try await client.upload("float_classifier_labels", to: "flowers").decode(ModelVersion.self)
            let patches = try await Self.patches(client, "flowers", 2, count: 1)
            #expect(patches.count == 1)
            let patch = try #require(patches.first)
            #expect(patch.fromVersion == 1 && patch.file == nil && patch.fromSha256 == first.sha256 && patch.offered)
            #expect(patch.size < second.size * 8 / 10)
            #expect(
                try await client.request(.get, "/v1/admin/models/flowers/versions/1/patches").decode(VersionPatchList.self).patches.isEmpty)

            let key = try await client.appKey()
            let manifest = try await client.request(.get, "/v1/models/flowers/manifest", headers: key).manifest()
            let offered = try #require(patch.sha256)
            #expect(manifest.version == 2)
            #expect(
                manifest.patches == [
                    ModelManifest.Patch(
                        from: first.sha256, sha256: offered, size: patch.size,
                        downloadURL: "/v1/blobs/sha256/\(offered)")
                ])
            let served = try await client.request(.get, manifest.patches[0].downloadURL, headers: key)
            #expect(served.status == .ok)
            let bytes = Array(buffer: served.body)
            #expect(SHA256.hash(data: bytes).hex == offered && bytes.count == patch.size)
            #expect(
                try Self.patched(try Fixtures.bytes("float_classifier"), with: bytes, size: second.size)
                    == (try Fixtures.bytes("float_classifier_labels")))
            try await Self.expectCounted(client, .offered, bytes: patch.size, fileBytes: second.size)
        }
    }

    /// `/metrics` counts the one patch made: its result, its bytes and its file's, some time.
    static func expectCounted(_ client: TestServer.Client, _ result: ServerMetrics.PatchResult, bytes: Int, fileBytes: Int) async throws {
        let metrics = try await client.request(.get, "/metrics", headers: [:]).text
        for other in ServerMetrics.PatchResult.allCases {
            #expect(metrics.contains(#"depot_patches_made_total{result="\#(other.rawValue)"} \#(other == result ? 1 : 0)"#), "\(other)")
        }
        #expect(metrics.contains("depot_patch_bytes_total \(bytes)\n") && metrics.contains("depot_patch_file_bytes_total \(fileBytes)\n"))
        let seconds = metrics.split(separator: "\n").first { $0.hasPrefix("depot_patch_seconds_total ") }?.split(separator: " ").last
        #expect(seconds.flatMap { Double($0) }.map { $0 > 0 } == true, "\(String(describing: seconds))")
    }

    @Test(arguments: DepotBackend.allCases) func patchesComeFromTheFewPublishedVersionsBefore(_ backend: DepotBackend) async throws {
        try await Self.server(backend, sources: 2).run { client in
            try await client.createModel("flowers")
            for fixture in ["float_classifier", "float_classifier_labels", "int8_conv"] {
                _ = try await client.upload(fixture, to: "flowers")
            }
            _ = try await client.upload("fp16_weights", to: "flowers", query: "publish=false")
            _ = try await client.upload("uint8_two_in_two_out", to: "flowers")
            // v4 is not published: neither made nor a source; v5 comes from v3 and v2.
            #expect(try await Self.patches(client, "flowers", 5, count: 2).map(\.fromVersion) == [2, 3])
            #expect(try await Self.patches(client, "flowers", 3, count: 2).map(\.fromVersion) == [1, 2])
            #expect(try await Self.patches(client, "flowers", 2, count: 1).map(\.fromVersion) == [1])
            #expect(
                try await client.request(.get, "/v1/admin/models/flowers/versions/4/patches").decode(VersionPatchList.self).patches.isEmpty)

            // Published later, v4 gets its patches too.
            #expect(try await client.request(.post, "/v1/admin/models/flowers/versions/4/publish").status == .ok)
            #expect(try await Self.patches(client, "flowers", 4, count: 2).map(\.fromVersion) == [2, 3])
        }
    }

    @Test(arguments: DepotBackend.allCases) func aPatchLargerThanEightyPercentIsRecordedButNotOffered(_ backend: DepotBackend) async throws
    {
        try await Self.server(backend).run { client in
            try await client.createModel("detector")
            // Two files of random bytes: nothing of the first helps make the second.
            var generator = SystemRandomNumberGenerator()
            let (old, new) = (
                (0..<4_096).map { _ in UInt8.random(in: 0...255, using: &generator) },
                (0..<4_096).map { _ in UInt8.random(in: 0...255, using: &generator) }
            )
            let first = try await CompanionFilesAPITests.upload(
                client, announced: [try CompanionFilesAPITests.file("noise", old)], parts: [old]
            )
            .decode(ModelVersion.self)
            let second = try await CompanionFilesAPITests.upload(
                client, announced: [try CompanionFilesAPITests.file("noise", new)], parts: [new]
            )
            .decode(ModelVersion.self)
            let patch = try #require(try await Self.patches(client, "detector", 2, count: 1).first)
            #expect(patch.file == "noise" && !patch.offered && patch.sha256 == nil)
            #expect(patch.size > new.count * 8 / 10)
            let manifest = try await client.request(.get, "/v1/models/detector/manifest", headers: try await client.appKey()).manifest()
            #expect(manifest.version == 2 && manifest.patches.isEmpty && manifest.files.first?.patches == [])
            #expect(Set(try await client.storedBlobs()) == Set([first.sha256, first.files[0].sha256, second.files[0].sha256]))
            try await Self.expectCounted(client, .tooLarge, bytes: patch.size, fileBytes: new.count)
        }
    }

    /// A new file of new bytes but for a stretch of the old one every 4 KiB: the server stops
    /// making its patch once what it has compressed passes 80 % of the file, and records it, not
    /// offered, with the size it had reached: less than the whole patch, more than the limit.
    @Test(arguments: DepotBackend.allCases) func aPatchThatCannotComeUnderTheLimitIsStoppedEarly(_ backend: DepotBackend) async throws {
        try await Self.server(backend).run { client in
            try await client.createModel("detector")
            var generator = SystemRandomNumberGenerator()
            let old = (0..<600_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let new = renewedBytes(from: old, count: 600_000, using: &generator)
            for file in [old, new] {
                #expect(
                    try await CompanionFilesAPITests.upload(
                        client, announced: [try CompanionFilesAPITests.file("noise", file)], parts: [file]
                    ).status == .created)
            }
            let patch = try #require(try await Self.patches(client, "detector", 2, count: 1).first)
            let whole = try PatchMaker.patch(from: old, to: new).get().count
            #expect(!patch.offered && patch.sha256 == nil)
            #expect(patch.size > PatchService.offerLimit(forFileOf: new.count) && patch.size < whole, "\(patch.size) of \(whole)")
            try await Self.expectCounted(client, .tooLarge, bytes: patch.size, fileBytes: new.count)
        }
    }

    @Test(arguments: DepotBackend.allCases) func aCompanionFileGetsItsOwnPatchAndAnUnchangedModelNone(_ backend: DepotBackend) async throws
    {
        try await Self.server(backend).run { client in
            try await client.createModel("detector")
            let labels = Array((0..<400).map { "label \($0)\n" }.joined().utf8)
            let changed = Array((0..<400).map { $0 == 200 ? "a changed label\n" : "label \($0)\n" }.joined().utf8)
            let first = try await CompanionFilesAPITests.upload(
                client, announced: [try CompanionFilesAPITests.file("labels", labels)], parts: [labels]
            )
            .decode(ModelVersion.self)
            _ = try await CompanionFilesAPITests.upload(
                client, announced: [try CompanionFilesAPITests.file("labels", changed)], parts: [changed])
            let patch = try #require(try await Self.patches(client, "detector", 2, count: 1).first)
            #expect(patch.file == "labels" && patch.fromSha256 == first.files[0].sha256 && patch.offered)

            let manifest = try await client.request(.get, "/v1/models/detector/manifest", headers: try await client.appKey()).manifest()
            #expect(manifest.patches.isEmpty, "the model's file is the same in both versions")
            let offered = try #require(manifest.files.first?.patches.first)
            #expect(offered.from == first.files[0].sha256 && offered.sha256 == patch.sha256 && offered.size == patch.size)
            let served = try await client.request(.get, offered.downloadURL, headers: try await client.appKey())
            #expect(try Self.patched(labels, with: Array(buffer: served.body), size: changed.count) == changed)
        }
    }

    @Test(arguments: DepotBackend.allCases) func deletingAVersionTakesItsPatchesAndTheirBlobs(_ backend: DepotBackend) async throws {
        try await Self.server(backend).run { client in
            try await client.createModel("flowers")
            let first = try await client.upload("float_classifier", to: "flowers").decode(ModelVersion.self)
            let second = try await client.upload("float_classifier_labels", to: "flowers").decode(ModelVersion.self)
            let patch = try #require(try await Self.patches(client, "flowers", 2, count: 1).first?.sha256)
            #expect(Set(try await client.storedBlobs()) == [first.sha256, second.sha256, patch])

            #expect(try await client.request(.delete, "/v1/admin/models/flowers/versions/1").status == .noContent)
            #expect(
                try await client.request(.get, "/v1/admin/models/flowers/versions/2/patches").decode(VersionPatchList.self).patches.isEmpty)
            #expect(Set(try await client.storedBlobs()) == [second.sha256])
            let manifest = try await client.request(.get, "/v1/models/flowers/manifest", headers: try await client.appKey()).manifest()
            #expect(manifest.version == 2 && manifest.patches.isEmpty)
            #expect(try await client.request(.get, "/v1/blobs/sha256/\(patch)", headers: try await client.appKey()).status == .notFound)

            let missing = try await client.request(.get, "/v1/admin/models/flowers/versions/9/patches")
            #expect(missing.status == .notFound && missing.error?.code == .notFound)
        }
    }
}
