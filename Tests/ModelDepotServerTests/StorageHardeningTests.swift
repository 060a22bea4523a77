import Foundation
import HTTPTypes
import ModelDepotShared
import Testing

/// The storage directory is private to the server's user; deletions commit before files go; a
/// blob missing or changed on disk is a server error naming a request id, never wrong bytes,
/// until a file that hashes to its digest is restored.
@Suite struct StorageHardeningTests {
    static func mode(_ url: URL) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
    }

    @Test func onlyTheServersUserCanReadTheStorage() async throws {
        let server = try await TestServer()
        // An earlier version left the directory and the database readable to everyone.
        try FileManager.default.createDirectory(
            at: server.storage, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        _ = FileManager.default.createFile(
            atPath: server.storage.appendingPathComponent("depot.sqlite").path, contents: nil,
            attributes: [.posixPermissions: 0o644])
        try await server.run { client in
            try await client.createModel("flowers")
            let version = try await client.upload("float_classifier", to: "flowers").decode(ModelVersion.self)
            let storage = client.storage
            #expect(try Self.mode(storage) == 0o700)
            for folder in ["blobs", "blobs/sha256", "blobs/sha256/\(version.sha256.prefix(2))", "tmp", "keys"] {
                #expect(try Self.mode(storage.appendingPathComponent(folder)) == 0o700, "\(folder)")
            }
            for file in [
                "depot.sqlite", "depot.sqlite-wal", "depot.sqlite-shm", "blobs/sha256/\(version.sha256.prefix(2))/\(version.sha256)",
            ] {
                #expect(try Self.mode(storage.appendingPathComponent(file)) == 0o600, "\(file)")
            }
        }
    }

    @Test func aBlobThatCannotBeRemovedLeavesTheDeletionCommitted() async throws {
        try await TestServer().run { client in
            try await client.createModel("flowers")
            let version = try await client.upload("float_classifier", to: "flowers", query: "").decode(ModelVersion.self)
            // A folder where the blob was: unlink fails, even for root.
            let blob = client.storage.appendingPathComponent("blobs/sha256/\(version.sha256.prefix(2))/\(version.sha256)")
            try FileManager.default.removeItem(at: blob)
            try FileManager.default.createDirectory(at: blob.appendingPathComponent("in-the-way"), withIntermediateDirectories: true)

            #expect(try await client.request(.delete, "/v1/admin/models/flowers/versions/1").status == .noContent)
            #expect(try await client.request(.get, "/v1/admin/models/flowers/versions/1").status == .notFound)
            #expect(try await client.request(.get, "/v1/admin/models/flowers/versions").decode(ModelVersionList.self).versions.isEmpty)
            #expect(FileManager.default.fileExists(atPath: blob.path), "the removal failed and was left for the next start")
        }
    }

    @Test func aBlobMissingOrChangedOnDiskIsAServerErrorAndNeverWrongBytes() async throws {
        try await TestServer().run { client in
            try await client.createModel("flowers")
            let version = try await client.upload("float_classifier", to: "flowers").decode(ModelVersion.self)
            let key = try await client.appKey()
            let uri = "/v1/blobs/sha256/\(version.sha256)"
            let blob = client.storage.appendingPathComponent("blobs/sha256/\(version.sha256.prefix(2))/\(version.sha256)")
            let bytes = try Data(contentsOf: blob)

            try FileManager.default.removeItem(at: blob)
            try await expectServerError(client, uri, key)
            try (bytes + Data([0])).write(to: blob)
            try await expectServerError(client, uri, key)
            try bytes.prefix(bytes.count - 1).write(to: blob)
            try await expectServerError(client, uri, key)
            var flipped = bytes
            flipped[flipped.count / 2] ^= 0xff
            try flipped.write(to: blob)
            try await expectServerError(client, uri, key)

            // Restored from a backup: a new file, which hashes to its digest again, is served.
            try bytes.write(to: blob, options: .atomic)
            let restored = try await client.request(.get, uri, headers: key)
            #expect(restored.status == .ok)
            #expect(Data(restored.body.readableBytesView) == bytes)
        }
    }

    func expectServerError(
        _ client: TestServer.Client, _ uri: String, _ key: HTTPFields,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        for method in [HTTPRequest.Method.get, .head] {
            let response = try await client.request(method, uri, headers: key)
            #expect(response.status == .internalServerError, "\(method)", sourceLocation: sourceLocation)
            guard method == .get else { continue }
            let message = response.error?.message ?? ""
            #expect(message.contains("request id"), "\(message)", sourceLocation: sourceLocation)
            #expect(!message.contains(client.storage.path), "a path in the body: \(message)", sourceLocation: sourceLocation)
        }
    }
}
