import Foundation
import Hummingbird
import HummingbirdTesting
import ModelDepotShared
import TestSupport
import Testing

/// The server's limit on what a model's associated files inflate to
/// (`--max-associated-files-size`, ``ServerConfiguration/verificationPolicy``) applies to uploads.
@Suite struct AssociatedFilesLimitAPITests {
    /// described_classifier's four deflated associated files inflate to this many bytes together.
    static func packedSize() throws -> Int {
        let described = try TFLiteVerifier().verify(try Fixtures.bytes("metadata/described_classifier"))
        return try #require(described.packedFiles).map(\.size).reduce(0, +)
    }

    @Test(arguments: DepotBackend.allCases) func uploadOverTheLimitIsRefusedAndStoresNothing(_ backend: DepotBackend) async throws {
        var server = try await TestServer(backend)
        server.configuration.verificationPolicy.maximumAssociatedFilesSize = try Self.packedSize() - 1
        try await server.run { client in
            try await client.createModel("flowers")
            let response = try await client.upload("metadata/described_classifier", to: "flowers")
            #expect(response.status == .unprocessableContent)
            #expect(response.error?.code == .associatedFilesTooLarge)
            #expect(response.error?.message.contains("bytes accepted for all of them") == true, "\(response.text)")
            #expect(try await client.storedBlobs().isEmpty)
            #expect(try await client.uploadLeftovers().isEmpty)
            let versions = try await client.request(.get, "/v1/admin/models/flowers/versions").decode(ModelVersionList.self)
            #expect(versions.versions.isEmpty)
        }
    }

    @Test(arguments: DepotBackend.allCases) func uploadWithinTheLimitIsStored(_ backend: DepotBackend) async throws {
        var server = try await TestServer(backend)
        server.configuration.verificationPolicy.maximumAssociatedFilesSize = try Self.packedSize()
        try await server.run { client in
            try await client.createModel("flowers")
            let response = try await client.upload("metadata/described_classifier", to: "flowers")
            #expect(response.status == .created, "\(response.text)")
            #expect(try response.decode(ModelVersion.self).tflite.labelFiles.count == 2)
        }
    }
}
