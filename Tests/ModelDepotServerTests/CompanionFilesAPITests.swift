import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotShared
import TestSupport
import Testing

/// Companion files uploaded with a model in one request (`Depot-Companion-Files`): stored by
/// digest, listed on the version and in the signed manifest, served like the model, removed with
/// the last version naming them, and refused whole when anything about them is wrong.
@Suite struct CompanionFilesAPITests {
    static let labels = Array("red\ngreen\nblue\n".utf8)
    static let settings = Array(#"{"maxDetections": 6}"#.utf8)

    static func file(_ name: String, _ bytes: [UInt8]) throws -> CompanionFile {
        try CompanionFile(name: name, sha256: SHA256.hash(data: bytes).hex, size: bytes.count)
    }

    /// Uploads the detector fixture (or the first `modelPrefix` bytes of it) followed by `parts`,
    /// announced as `announced`; the model's length is announced as `modelSize`, or as it is.
    static func upload(
        _ client: TestServer.Client, announced: [CompanionFile], parts: [[UInt8]], modelSize: Int? = nil,
        modelPrefix: Int? = nil, query: String = "publish=true"
    ) async throws -> TestServer.Response {
        let whole = try Fixtures.bytes("metadata/object_detector")
        let model = Array(whole.prefix(modelPrefix ?? whole.count))
        var headers = TestServer.Client.admin
        headers[HTTPField.Name(DepotHeader.contentLength)!] = String(modelSize ?? model.count)
        headers[HTTPField.Name(DepotHeader.companionFiles)!] = CompanionFile.header(announced)
        return try await client.request(
            .post, "/v1/admin/models/detector/versions?\(query)", headers: headers,
            body: ByteBuffer(bytes: model + parts.flatMap { $0 }))
    }

    @Test(arguments: DepotBackend.allCases) func filesAreStoredListedAndSignedIntoTheManifest(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            try await client.createModel("detector")
            let files = [try Self.file("labels", Self.labels), try Self.file("automl", Self.settings)]
            let response = try await Self.upload(client, announced: files, parts: [Self.labels, Self.settings])
            #expect(response.status == .created)
            let version = try response.decode(ModelVersion.self)
            #expect(version.files == files)
            #expect(version.size == (try Fixtures.bytes("metadata/object_detector")).count)
            #expect(version.tflite.labelFiles.first?.labels == ["red", "green", "blue"])
            #expect(Set(try await client.storedBlobs()) == Set([version.sha256] + files.map(\.sha256)))
            #expect(try await client.uploadLeftovers().isEmpty)

            let shown = try await client.request(.get, "/v1/admin/models/detector/versions/1").decode(ModelVersion.self)
            #expect(shown.files == files)
            let manifest = try await client.request(.get, "/v1/models/detector/manifest", headers: try await client.appKey()).manifest()
            #expect(manifest.files.map(\.name) == ["labels", "automl"])
            #expect(manifest.files.map(\.sha256) == files.map(\.sha256))
            #expect(manifest.files.map(\.downloadURL) == files.map { "/v1/blobs/sha256/\($0.sha256)" })
            let served = try await client.request(.get, manifest.files[0].downloadURL, headers: try await client.appKey())
            #expect(served.status == .ok)
            #expect(Array(buffer: served.body) == Self.labels)

            // The console's version page lists them as `depot versions` does.
            let (cookie, _) = try await ConsoleTests.signIn(client)
            let page = try await client.request(.get, "/console/models/detector/versions/1", headers: cookie).text
            for file in files {
                #expect(page.contains("  \(file.name)  \(file.size) bytes, sha256 \(file.sha256)"), "\(page)")
            }
            #expect(!page.contains("companion files: none"))
        }
    }

    @Test(arguments: DepotBackend.allCases) func deletingTheLastVersionNamingAFileRemovesIt(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            try await client.createModel("detector")
            let labels = try Self.file("labels", Self.labels)
            _ = try await Self.upload(client, announced: [labels], parts: [Self.labels], query: "publish=false")
            let second = try await Self.upload(client, announced: [labels], parts: [Self.labels], query: "publish=false")
            #expect(second.status == .created)
            #expect(try await client.request(.delete, "/v1/admin/models/detector/versions/1").status == .noContent)
            #expect(try await client.storedBlobs().contains(labels.sha256))
            #expect(try await client.request(.delete, "/v1/admin/models/detector/versions/2").status == .noContent)
            #expect(try await client.storedBlobs().isEmpty)
        }
    }

    @Test(arguments: DepotBackend.allCases) func wrongAnnouncementsAreRefusedAndStoreNothing(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            try await client.createModel("detector")
            let labels = try Self.file("labels", Self.labels)
            var changed = Self.labels
            changed[0] = UInt8(ascii: "R")
            let digest = try await Self.upload(client, announced: [labels], parts: [changed])
            #expect(digest.status == .badRequest)
            #expect(digest.error?.code == .digestMismatch)
            #expect(digest.error?.message.contains("'labels'") == true)

            let short = try await Self.upload(client, announced: [labels], parts: [Array(Self.labels.dropLast())])
            #expect(short.error?.code == .sizeMismatch)
            #expect(short.error?.message.contains("companion file 'labels'") == true)

            let long = try await Self.upload(client, announced: [labels], parts: [Self.labels, [1, 2, 3]])
            #expect(long.error?.code == .sizeMismatch)

            var headers = TestServer.Client.admin
            headers[HTTPField.Name(DepotHeader.companionFiles)!] = "name=Labels;size=3;sha256=\(labels.sha256)"
            let badName = try await client.request(
                .post, "/v1/admin/models/detector/versions", headers: headers,
                body: ByteBuffer(bytes: try Fixtures.bytes("metadata/object_detector")))
            #expect(badName.status == .badRequest)
            #expect(badName.error?.code == .invalidCompanionFile)

            for malformed in [
                "name=labels;size=many;sha256=\(labels.sha256)", "labels", "name=labels;size=3;sha256=XYZ",
                CompanionFile.header([labels, labels]),
            ] {
                headers[HTTPField.Name(DepotHeader.companionFiles)!] = malformed
                let refused = try await client.request(
                    .post, "/v1/admin/models/detector/versions", headers: headers,
                    body: ByteBuffer(bytes: try Fixtures.bytes("metadata/object_detector")))
                #expect(refused.status == .badRequest && refused.error?.code == .invalidCompanionFile, "\(malformed)")
            }

            headers[HTTPField.Name(DepotHeader.companionFiles)!] = CompanionFile.header([labels])
            let noLength = try await client.request(
                .post, "/v1/admin/models/detector/versions", headers: headers,
                body: ByteBuffer(bytes: try Fixtures.bytes("metadata/object_detector") + Self.labels))
            #expect(noLength.error?.code == .badRequest)
            #expect(noLength.error?.message.contains(DepotHeader.contentLength) == true)

            let many = try (0...CompanionFile.maximumCount).map { try CompanionFile(name: "f\($0)", sha256: labels.sha256, size: 1) }
            headers[HTTPField.Name(DepotHeader.companionFiles)!] = CompanionFile.header(many)
            let tooMany = try await client.request(
                .post, "/v1/admin/models/detector/versions", headers: headers,
                body: ByteBuffer(bytes: [0]))
            #expect(tooMany.error?.code == .invalidCompanionFile)

            headers[HTTPField.Name(DepotHeader.companionFiles)!] =
                "name=labels;size=\(CompanionFile.maximumSize + 1);sha256=\(labels.sha256)"
            let tooLarge = try await client.request(
                .post, "/v1/admin/models/detector/versions", headers: headers,
                body: ByteBuffer(bytes: [0]))
            #expect(tooLarge.status == .contentTooLarge)

            // A model announced shorter than it is: the body runs past its parts, and the files go with it.
            let damaged = try await Self.upload(client, announced: [labels], parts: [Self.labels], modelSize: 100)
            #expect(damaged.status == .badRequest && damaged.error?.code == .sizeMismatch)
            // A model the verifier refuses (its first 4 KiB) takes its files with it.
            let refused = try await Self.upload(client, announced: [labels], parts: [Self.labels], modelPrefix: 4096)
            #expect(
                refused.status == .unprocessableContent && refused.error?.code == .offsetOutOfBounds, "\(String(describing: refused.error))"
            )

            let versions = try await client.request(.get, "/v1/admin/models/detector/versions").decode(ModelVersionList.self)
            #expect(versions.versions.isEmpty)
            #expect(try await client.storedBlobs().isEmpty)
            #expect(try await client.uploadLeftovers().isEmpty)
        }
    }
}
