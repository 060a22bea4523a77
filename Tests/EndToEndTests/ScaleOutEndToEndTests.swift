import Foundation
import ModelDepot
import ModelDepotShared
import TestSupport
import Testing

/// `depot serve` with its catalog in PostgreSQL and its blobs in an S3 server (moto, with
/// authentication on), driven by the real CLI and SDK.
@Suite struct ScaleOutEndToEndTests {
    static func published(redirect: Int? = nil) async throws -> (PublishedModel, TestS3.Settings) {
        let s3 = try TestS3.settings()
        let arguments =
            await ["--database", try TestPostgres.freshDatabase(), "--blobs", s3.freshURL()]
            + (redirect.map { ["--blob-redirect", String($0)] } ?? [])
        return await (try PublishedModel(["float_classifier"], arguments: arguments, environment: s3.environment), s3)
    }

    @Test func theCLIUploadsIntoTheObjectStoreAndTheSDKDownloadsThroughTheServer() async throws {
        let (published, _) = try await Self.published()
        let downloader = try published.downloader { $0.device = DeviceContext(platform: "linux") }
        let model = try await downloader.model(named: "flowers")
        #expect(try Data(contentsOf: model.fileURL) == Data(contentsOf: URL(fileURLWithPath: Binaries.fixture("float_classifier"))))
        await #expect(try published.server.metric("depot_blob_bytes_served_total") == 992, "the bytes went through the server")
        let localBlobs = published.server.storage.appendingPathComponent("blobs/sha256")
        #expect(try FileManager.default.subpathsOfDirectory(atPath: localBlobs.path).isEmpty, "no blob is kept on the server's disk")

        let refused = try await Command.depot(
            ["upload", "flowers", Binaries.fixture("invalid/no_subgraphs")], environment: published.server.environment)
        #expect(refused.status == 1)
        #expect(refused.error.contains("Model.subgraphs is empty"))
        let versions = try await Command.depot(["versions", "flowers", "--json"], environment: published.server.environment).decode(
            ModelVersionList.self)
        #expect(versions.versions.map(\.version) == [1], "the refused upload stored nothing")
    }

    @Test func withBlobRedirectTheSDKFetchesFromTheStoreItAllows() async throws {
        let (published, s3) = try await Self.published(redirect: 300)
        let strict = try published.downloader { $0.device = DeviceContext(platform: "linux") }
        let refused = await #expect(throws: DepotError.self) { try await strict.model(named: "flowers") }
        #expect(refused?.code == .originNotAllowed, "\(refused?.message ?? "")")

        try FileManager.default.removeItem(at: published.cache)
        let allowing = try published.downloader {
            $0.device = DeviceContext(platform: "linux")
            $0.allowedDownloadOrigins = [URL(string: s3.endpoint)!]
        }
        let model = try await allowing.model(named: "flowers")
        #expect(try Data(contentsOf: model.fileURL) == Data(contentsOf: URL(fileURLWithPath: Binaries.fixture("float_classifier"))))
        await #expect(try published.server.metric("depot_blob_bytes_served_total") == 0, "the object store served the bytes")
    }

    @Test func aDatabaseOrObjectStoreThatCannotBeUsedStopsTheStartWithItsReason() async throws {
        let scratch = try Scratch()
        let s3 = try TestS3.settings()
        let storage = scratch.path("storage")
        let noDatabase = try await Command.depot(
            [
                "serve", "--storage", storage, "--port", "0",
                "--database", "postgres://depot:x@127.0.0.1:1/depot?sslmode=disable",
            ], environment: [:])
        #expect(noDatabase.status == 1)
        #expect(noDatabase.error.contains("Could not reach the catalog database postgres://depot@127.0.0.1:1/depot"))

        var wrongSecret = s3.environment
        wrongSecret["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
        let refused = try await Command.depot(
            ["serve", "--storage", storage, "--port", "0", "--blobs", s3.freshURL()], environment: wrongSecret)
        #expect(refused.status == 1)
        #expect(refused.error.contains("SignatureDoesNotMatch"), "\(refused.error)")

        let badURL = try await Command.depot(["serve", "--storage", storage, "--blobs", "s3://Bad_Bucket"], environment: s3.environment)
        #expect(badURL.status == 1)
        #expect(badURL.error.contains("is not an S3 bucket name"))
        let redirectAlone = try await Command.depot(["serve", "--storage", storage, "--blob-redirect", "300"], environment: [:])
        #expect(redirectAlone.status == 1)
        #expect(redirectAlone.error.contains("needs --blobs"))
    }
}
