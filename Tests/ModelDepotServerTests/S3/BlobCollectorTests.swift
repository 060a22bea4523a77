import Foundation
import ModelDepotShared
import NIOCore
import Synchronization
import TestSupport
import Testing

@testable import ModelDepotServer

/// The collector, against the two deployment shapes: SQLite with files (in-process lock) and
/// PostgreSQL with S3 (advisory lock). It removes what no version references, never a blob an
/// upload is naming, and what abandoned uploads left in the store.
@Suite struct BlobCollectorTests {
    enum Shape: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case sqliteAndFiles, postgresAndS3
        var testDescription: String { rawValue }
    }

    struct Setup {
        let catalog: any ModelCatalog
        let blobs: any BlobStore
        let collector: BlobCollector
    }

    static func setUp(_ shape: Shape, abandonedAfter: TimeInterval = 24 * 3600) async throws -> Setup {
        let catalog: any ModelCatalog, blobs: any BlobStore, lock: any BlobCollectionLock
        switch shape {
        case .sqliteAndFiles:
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("depot-collector-\(UUID().uuidString)").path
            blobs = try FileSystemBlobStore(root: root)
            catalog = try SQLiteModelCatalog(path: root + "/depot.sqlite")
            lock = LocalBlobCollectionLock()
        case .postgresAndS3:
            let postgres = try await PostgresModelCatalog.forTest(try PostgresLocation(url: try TestPostgres.freshDatabase()))
            let s3 = try TestS3.settings()
            blobs = try await S3BlobStore.connect(try S3Location(url: s3.freshURL(), environment: s3.environment))
            catalog = postgres
            lock = PostgresBlobCollectionLock(catalog: postgres)
        }
        _ = try await catalog.createModel(ModelCreation(name: try ModelName("flowers")), at: Date())
        var collector = BlobCollector(
            catalog: catalog, blobs: blobs, lock: lock, index: BlobIndex(catalog: catalog, blobs: blobs), clock: { Date() })
        collector.abandonedAfter = abandonedAfter
        return Setup(catalog: catalog, blobs: blobs, collector: collector)
    }

    /// Stores `fixture` as a blob (and, with `version`, names it in a version of `flowers`).
    static func store(_ fixture: String, in setup: Setup, version: Bool) async throws -> String {
        let upload = try setup.blobs.beginUpload()
        try await upload.write(ByteBuffer(bytes: try Fixtures.bytes(fixture)))
        let digest = try await upload.finish()
        let tflite = try await UploadService.verify(upload, policy: .default)
        try await upload.commit(sha256: digest)
        if version {
            _ = try await setup.catalog.addVersion(
                VerifiedUpload(sha256: digest, size: 1, notes: "", tflite: tflite),
                to: try ModelName("flowers"), publish: true, at: Date())
        }
        return digest
    }

    @Test(arguments: Shape.allCases)
    func whatNoVersionReferencesIsRemovedAndNothingElse(_ shape: Shape) async throws {
        let setup = try await Self.setUp(shape)
        let kept = try await Self.store("float_classifier", in: setup, version: true)
        let orphan = try await Self.store("int8_conv", in: setup, version: false)

        let dry = try await setup.collector.collect(dryRun: true)
        #expect(dry.removedBlobs == [orphan] && dry.dryRun)
        #expect(Set(try await setup.blobs.storedDigests()) == [kept, orphan], "a dry run removes nothing")

        let collected = try await setup.collector.collect()
        #expect(collected.removedBlobs == [orphan] && !collected.busy)
        #expect(try await setup.blobs.storedDigests() == [kept])
        #expect(try await setup.collector.collect().removedBlobs.isEmpty)
    }

    @Test(arguments: Shape.allCases)
    func aBlobAnUploadIsNamingIsNeverRemoved(_ shape: Shape) async throws {
        let setup = try await Self.setUp(shape)
        let collector = setup.collector
        // An upload has stored its blob and not yet written its version (it holds the lock shared)
        let named = try await collector.lock.naming { () -> String in
            let digest = try await Self.store("int8_conv", in: setup, version: false)
            let during = try await collector.collect(wait: false)
            #expect(during.busy, "the collector does not get the lock while an upload names a blob")
            #expect(during.removedBlobs.isEmpty)
            _ = try await setup.catalog.addVersion(
                VerifiedUpload(sha256: digest, size: 1, notes: "", tflite: try TFLiteVerifier().verify(Fixtures.bytes("int8_conv"))),
                to: try ModelName("flowers"), publish: true, at: Date())
            return digest
        }
        let after = try await collector.collect(wait: false)
        #expect(!after.busy && after.removedBlobs.isEmpty)
        #expect(try await setup.blobs.storedDigests() == [named])
    }

    @Test func uploadsAbandonedInTheStoreAreRemoved() async throws {
        let setup = try await Self.setUp(.postgresAndS3, abandonedAfter: -60)
        // One upload cut off with a part sent (an unfinished multipart upload), one finished but never committed
        let cut = try setup.blobs.beginUpload()
        try await cut.write(ByteBuffer(bytes: [UInt8](repeating: 7, count: S3Upload.partSize + 1)))
        let staged = try setup.blobs.beginUpload()
        try await staged.write(ByteBuffer(bytes: try Fixtures.bytes("float_classifier")))
        _ = try await staged.finish()

        let fresh = BlobCollector(
            catalog: setup.catalog, blobs: setup.blobs, lock: setup.collector.lock, index: setup.collector.index,
            clock: { Date() })
        #expect(try await fresh.collect().removedUploads == 0, "a day has not passed")
        #expect(try await setup.collector.collect().removedUploads == 2)
        let store = try #require(setup.blobs as? S3BlobStore)
        #expect(try await store.client.pendingUploads(prefix: store.client.location.key("")).isEmpty)
        #expect(try await store.client.list(prefix: store.client.location.key("uploads/")).isEmpty)
    }
}
