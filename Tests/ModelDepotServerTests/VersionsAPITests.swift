import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepotServer

@Suite struct VersionsAPITests {
    @Test(arguments: DepotBackend.allCases) func uploadStoresAVersionWithWhatTheInspectorRead(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            try await client.createModel("flowers")
            let bytes = try Fixtures.bytes("float_classifier_labels")
            let response = try await client.upload("float_classifier_labels", to: "flowers", query: "publish=false&notes=first%20cut")
            #expect(response.status == .created)
            #expect(response.headers[.location] == "/v1/admin/models/flowers/versions/1")
            let version = try response.decode(ModelVersion.self)
            #expect(version.version == 1)
            #expect(version.size == bytes.count)
            #expect(version.sha256 == SHA256.hash(data: bytes).hex)
            #expect(version.notes == "first cut")
            let admin = try await client.request(.get, "/v1/admin/keys").decode(AccessKeyList.self).keys.first { $0.kind == .admin }
            #expect(version.uploadedBy != nil && version.uploadedBy == admin?.id, "the admin token that uploaded it")
            #expect(!version.published)
            #expect(version.tflite.inputs.map(\.name) == ["image"])
            #expect(version.tflite.appendedDataSize > 0)
            #expect(try await client.storedBlobs() == [version.sha256])
            #expect(try await client.uploadLeftovers().isEmpty)
        }
    }

    @Test(arguments: DepotBackend.allCases) func identicalContentSharesOneBlobAndNumbersAreNeverReused(_ backend: DepotBackend) async throws
    {
        try await TestServer(backend).run { client in
            try await client.createModel("flowers")
            for _ in 0..<2 { _ = try await client.upload("float_classifier", to: "flowers") }
            #expect(try await client.storedBlobs().count == 1)
            #expect(try await client.request(.delete, "/v1/admin/models/flowers/versions/2").status == .noContent)
            #expect(try await client.storedBlobs().count == 1)
            let third = try await client.upload("int8_conv", to: "flowers").decode(ModelVersion.self)
            #expect(third.version == 3)
            #expect(try await client.request(.delete, "/v1/admin/models/flowers/versions/1").status == .noContent)
            #expect(try await client.storedBlobs() == [third.sha256])
            let versions = try await client.request(.get, "/v1/admin/models/flowers/versions").decode(ModelVersionList.self)
            #expect(versions.versions.map(\.version) == [3])
        }
    }

    @Test(arguments: DepotBackend.allCases) func damagedModelIs422NamingTheProblemAndStoresNothing(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            try await client.createModel("flowers")
            _ = try await client.upload("float_classifier", to: "flowers")
            var damaged = try Fixtures.bytes("float_classifier")
            damaged.replaceSubrange(4..<8, with: Array("ONNX".utf8))
            let response = try await client.request(.post, "/v1/admin/models/flowers/versions", body: ByteBuffer(bytes: damaged))
            #expect(response.status == .unprocessableContent)
            #expect(response.error?.code == .wrongFileIdentifier)
            let notTFLite = try await client.request(.post, "/v1/admin/models/flowers/versions", body: ByteBuffer(string: "hello"))
            #expect(notTFLite.error?.code == .modelTooSmall)
            let invalid = try await client.request(
                .post, "/v1/admin/models/flowers/versions",
                body: ByteBuffer(bytes: try Fixtures.bytes("invalid/tensor_buffer_out_of_range")))
            #expect(invalid.status == .unprocessableContent)
            #expect(invalid.error?.message.contains(".buffer is 99") == true)

            let versions = try await client.request(.get, "/v1/admin/models/flowers/versions").decode(ModelVersionList.self)
            #expect(versions.versions.map(\.version) == [1])
            #expect(try await client.storedBlobs().count == 1)
            #expect(try await client.uploadLeftovers().isEmpty)
        }
    }

    @Test(arguments: DepotBackend.allCases) func digestMismatchIs400AndStoresNothing(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            try await client.createModel("flowers")
            var headers = TestServer.Client.admin
            headers[HTTPField.Name("Depot-Content-SHA256")!] = String(repeating: "ab", count: 32)
            let response = try await client.upload("float_classifier", to: "flowers", headers: headers)
            #expect(response.status == .badRequest)
            #expect(response.error?.code == .digestMismatch)
            headers[HTTPField.Name("Depot-Content-SHA256")!] = "not-hex"
            #expect(try await client.upload("float_classifier", to: "flowers", headers: headers).error?.code == .badRequest)
            #expect(try await client.storedBlobs().isEmpty)
            #expect(try await client.uploadLeftovers().isEmpty)
            #expect(try await client.request(.get, "/v1/admin/models/flowers").decode(ModelSummary.self).versionCount == 0)
        }
    }

    @Test func anAnnouncedDigestIs64ASCIIHexDigitsInEitherCase() throws {
        #expect(try AnnouncedUpload.digest(String(repeating: "Ab", count: 32), from: "header") == String(repeating: "ab", count: 32))
        for bad in [String(repeating: "\u{FF10}", count: 64), String(repeating: "a", count: 63), String(repeating: "g", count: 64)] {
            let error = #expect(throws: DepotError.self, "Unicode's other hex digits (fullwidth) are not a SHA-256's") {
                try AnnouncedUpload.digest(bad, from: "header")
            }
            #expect(error?.code == .badRequest)
        }
    }

    @Test(arguments: DepotBackend.allCases) func uploadOverTheLimitIs413AndStoresNothing(_ backend: DepotBackend) async throws {
        try await TestServer(backend, maximumUploadSize: 1000).run { client in
            try await client.createModel("flowers")
            let response = try await client.upload("float_classifier_labels", to: "flowers")
            #expect(response.status == .contentTooLarge)
            #expect(response.error?.message.contains("at most 1000") == true)
            #expect(try await client.upload("float_classifier", to: "flowers").status == .created)
            #expect(try await client.uploadLeftovers().isEmpty)
        }
    }

    @Test(arguments: DepotBackend.allCases) func anAnnouncedSizeIsCheckedBeforeAndAfterTheBody(_ backend: DepotBackend) async throws {
        try await TestServer(backend, maximumUploadSize: 1000).run { client in
            try await client.createModel("flowers")
            let size = try Fixtures.bytes("float_classifier").count
            func upload(announcing value: String) async throws -> TestServer.Response {
                var headers = TestServer.Client.admin
                headers[HTTPField.Name("Depot-Content-Length")!] = value
                return try await client.upload("float_classifier", to: "flowers", headers: headers)
            }
            let tooLarge = try await upload(announcing: "5000")
            #expect(tooLarge.status == .contentTooLarge)
            #expect(tooLarge.error?.message.contains("this server accepts at most 1000") == true)
            let cut = try await upload(announcing: String(size + 1))
            #expect(cut.status == .badRequest)
            #expect(cut.error?.code == .sizeMismatch)
            #expect(
                cut.error?.message
                    == "The upload has \(size) bytes, but the client sent \(size + 1) in Depot-Content-Length: the body was cut or the file changed in transit. Nothing was stored; upload again."
            )
            let long = try await upload(announcing: String(size - 1))
            #expect(
                long.error?.message.hasPrefix(
                    "The upload has more than \(size - 1) bytes, but the client sent \(size - 1) in Depot-Content-Length") == true)
            #expect(long.headers[.connection] == "close", "the rest of a body longer than announced is not read")
            #expect(try await upload(announcing: "lots").error?.message == "Depot-Content-Length 'lots' is not a number of bytes.")
            #expect(try await client.storedBlobs().isEmpty)
            #expect(try await client.uploadLeftovers().isEmpty)
            #expect(try await upload(announcing: String(size)).status == .created)
        }
    }

    @Test(arguments: DepotBackend.allCases) func aDigestAnnouncedAsATrailerMustArrive(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            try await client.createModel("flowers")
            var headers = TestServer.Client.admin
            headers[.trailer] = "X-Other, depot-content-sha256"
            let response = try await client.upload("float_classifier", to: "flowers", headers: headers)
            #expect(response.status == .badRequest)
            #expect(response.error?.code == .trailerMissing)
            #expect(
                response.error?.message.hasPrefix(
                    "The request announced Depot-Content-SHA256 in its Trailer field, but its body ended without that trailer") == true)
            #expect(try await client.storedBlobs().isEmpty)
            headers[.trailer] = "X-Other"
            #expect(
                try await client.upload("float_classifier", to: "flowers", headers: headers).status == .created,
                "other trailers are not awaited")
        }
    }

    @Test(arguments: DepotBackend.allCases) func unknownModelOrVersionIs404(_ backend: DepotBackend) async throws {
        try await TestServer(backend).run { client in
            #expect(try await client.upload("float_classifier", to: "nothing").status == .notFound)
            try await client.createModel("flowers")
            let missing = try await client.request(.get, "/v1/admin/models/flowers/versions/7")
            #expect(missing.status == .notFound)
            #expect(missing.error?.message == "Model 'flowers' has no version 7. List its versions with 'depot versions flowers'.")
            #expect(try await client.request(.get, "/v1/admin/models/flowers/versions/zero").status == .badRequest)
            #expect(try await client.storedBlobs().isEmpty)
        }
    }
}
