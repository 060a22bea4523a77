import Crypto
import Foundation
import ModelDepotShared
import NIOCore
import TestSupport
import Testing

@testable import ModelDepotServer

/// The ``BlobStore`` contract, run against the storage directory and an S3 server: what goes in
/// comes out byte for byte under its SHA-256, verification reads it where it lies, identical
/// content is one blob, and a discarded upload leaves nothing behind.
@Suite struct BlobStoreContractTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case files, s3
        var testDescription: String { rawValue }
    }

    /// A store, and what it holds besides committed blobs (temporary files, staged objects,
    /// unfinished multipart uploads).
    struct Opened {
        let store: any BlobStore
        let leftovers: @Sendable () async throws -> [String]
        let contents: @Sendable (String) async throws -> Data?
    }

    static func open(_ backend: Backend) async throws -> Opened {
        switch backend {
        case .files:
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("depot-blobs-\(UUID().uuidString)").path
            let store = try FileSystemBlobStore(root: root)
            return Opened(
                store: store, leftovers: { try FileManager.default.contentsOfDirectory(atPath: root + "/tmp") },
                contents: { sha in store.filePath(of: sha).flatMap { FileManager.default.contents(atPath: $0) } })
        case .s3:
            let settings = try TestS3.settings()
            let store = try await S3BlobStore.connect(try S3Location(url: settings.freshURL(), environment: settings.environment))
            let client = store.client
            return Opened(
                store: store,
                leftovers: {
                    let staged = try await client.list(prefix: client.location.key("uploads/")).map(\.key)
                    return staged + (try await client.pendingUploads(prefix: client.location.key("")).map { "multipart " + $0.key })
                },
                contents: { sha in
                    guard let response = try await client.get(store.blobKey(sha)) else { return nil }
                    return Data(buffer: try await response.body.collect(upTo: 64 << 20))
                })
        }
    }

    static func pattern(_ count: Int, seed: Int) -> [UInt8] {
        var state = UInt64(seed + 1) &* 0x9E37_79B9_7F4A_7C15
        return (0..<count).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
    }

    /// Around the object store's part size (8 MiB) and past the parts it keeps in flight.
    static let lengths = [0, 1, 1_000_003, S3Upload.partSize - 1, S3Upload.partSize, S3Upload.partSize + 1, 3 * S3Upload.partSize + 4_097]

    @Test(arguments: Backend.allCases)
    func uploadsOfEveryLengthComeBackByteForByte(_ backend: Backend) async throws {
        let opened = try await Self.open(backend)
        for (index, length) in Self.lengths.enumerated() {
            let bytes = Self.pattern(length, seed: index)
            let upload = try opened.store.beginUpload()
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + [65_536, 7, 3_000_017][start % 3])
                try await upload.write(ByteBuffer(bytes: bytes[start..<end]))
                start = end
            }
            let digest = try await upload.finish()
            #expect(digest == SHA256.hash(data: bytes).hex, "length \(length)")
            try await upload.commit(sha256: digest)
            let stored = try await opened.contents(digest)
            let identical = stored == Data(bytes)
            #expect(identical, "length \(length): \(stored?.count ?? -1) bytes stored")
            #expect(try await opened.leftovers().isEmpty, "length \(length)")
        }
    }

    @Test(arguments: Backend.allCases)
    func aBlobIsReadAsALocalFileAndACopyGoesAfter(_ backend: Backend) async throws {
        let opened = try await Self.open(backend)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("depot-local-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (index, length) in [0, 1, 5 << 20].enumerated() {
            let bytes = Self.pattern(length, seed: 40 + index)
            let upload = try opened.store.beginUpload()
            try await upload.write(ByteBuffer(bytes: bytes))
            let digest = try await upload.finish()
            try await upload.commit(sha256: digest)
            let read = try await opened.store.withLocalFile(of: digest, size: length, in: directory) { path in
                FileManager.default.contents(atPath: path)
            }
            #expect(read == Data(bytes), "length \(length)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "length \(length)")
            await #expect(throws: DepotError.self, "a size that is not the blob's") {
                try await opened.store.withLocalFile(of: digest, size: length + 1, in: directory) { _ in () }
            }
        }
        await #expect(throws: DepotError.self, "a blob the store does not hold") {
            try await opened.store.withLocalFile(of: String(repeating: "e", count: 64), size: 10, in: directory) { _ in () }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test(arguments: Backend.allCases)
    func verificationReadsTheUploadWhereItLies(_ backend: Backend) async throws {
        let opened = try await Self.open(backend)
        for fixture in ["float_classifier", "int8_conv", "invalid/tensor_buffer_out_of_range"] {
            let bytes = try Fixtures.bytes(fixture)
            let upload = try opened.store.beginUpload()
            try await upload.write(ByteBuffer(bytes: bytes))
            _ = try await upload.finish()
            let whole = Result { () throws(DepotError) in try TFLiteVerifier().verify(bytes) }
            let inPlace: Result<TFLiteModelDescription, DepotError>
            do { inPlace = .success(try await UploadService.verify(upload, policy: .default)) } catch { inPlace = .failure(error) }
            #expect(inPlace == whole, "\(fixture)")
            await upload.discard()
        }
        #expect(try await opened.leftovers().isEmpty, "discarding finished uploads removes them")
    }

    @Test(arguments: Backend.allCases)
    func identicalContentIsOneBlobAndADiscardedUploadLeavesNothing(_ backend: Backend) async throws {
        let opened = try await Self.open(backend)
        let bytes = Self.pattern(S3Upload.partSize + 10, seed: 7)
        var digests: [String] = []
        for _ in 0..<2 {
            let upload = try opened.store.beginUpload()
            try await upload.write(ByteBuffer(bytes: bytes))
            let digest = try await upload.finish()
            try await upload.commit(sha256: digest)
            digests.append(digest)
        }
        #expect(digests[0] == digests[1])
        #expect(try await opened.contents(digests[0]) == Data(bytes))

        // An upload cut off mid-way (the client went away) with parts still in flight
        let abandoned = try opened.store.beginUpload()
        try await abandoned.write(ByteBuffer(bytes: Self.pattern(2 * S3Upload.partSize + 5, seed: 8)))
        await abandoned.discard()
        #expect(try await opened.leftovers().isEmpty)

        try await opened.store.remove(digests[0])
        #expect(try await opened.contents(digests[0]) == nil)
        try await opened.store.remove(digests[0])
    }
}
