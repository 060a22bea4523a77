import Foundation
import ModelDepot
import ModelDepotShared
import TestSupport
import Testing

/// The ML Kit-style surface: RemoteModel, download → Progress, isModelDownloaded, delete, and
/// a bundled LocalModel as the last fallback.
@Suite struct MLKitStyleEndToEndTests {
    func setUp() async throws -> (PublishedModel, ModelDownloader) {
        let published = try await PublishedModel(["float_classifier_labels"])
        return (published, try published.downloader { $0.downloadChunkSize = 256 })
    }

    @Test func downloadReportsProgressAndTheModelIsThenDownloaded() async throws {
        let (published, downloader) = try await setUp()
        defer { withExtendedLifetime(published) {} }
        let remote = RemoteModel(name: "flowers")
        #expect(await !downloader.isModelDownloaded(remote))
        let progress = await downloader.download(remote)
        _ = try await downloader.model(named: "flowers")
        #expect(progress.fractionCompleted == 1)
        #expect(progress.totalUnitCount == 1127)
        #expect(await downloader.isModelDownloaded(remote))
        #expect(await downloader.latestModelFilePath(remote) != nil)
        try await downloader.deleteDownloadedModel(remote)
        #expect(await !downloader.isModelDownloaded(remote))
    }

    @Test func failedDownloadCancelsItsProgress() async throws {
        let (published, downloader) = try await setUp()
        defer { withExtendedLifetime(published) {} }
        let progress = await downloader.download(RemoteModel(name: "nothing"))
        let missing = await #expect(throws: DepotError.self) { try await downloader.model(named: "nothing") }
        #expect(missing?.code == .notFound)
        #expect(progress.isCancelled)
    }

    @Test func bundledModelIsTheLastFallbackAndIsVerified() async throws {
        let published = try await PublishedModel(["float_classifier_labels"])
        // No server answers: a port below the ephemeral range, which no other test's server can
        // be given (a stopped server's port can be, and would answer with another catalog).
        let downloader = try published.downloader {
            $0.serverURL = URL(string: "http://127.0.0.1:9")!
            $0.downloadChunkSize = 256
        }
        let bundled = LocalModel(fileURL: URL(fileURLWithPath: Binaries.fixture("int8_conv")))
        let model = try await downloader.model(named: "flowers", fallback: bundled)
        #expect(model.version == 0 && model.manifest.arm == "bundled")
        #expect(model.description.inputs.first?.type == .int8)

        let broken = LocalModel(fileURL: URL(fileURLWithPath: Binaries.fixture("invalid/no_subgraphs")))
        let refused = await #expect(throws: DepotError.self) { try await downloader.model(named: "flowers", fallback: broken) }
        #expect(refused?.code == .noSubgraphs)
    }
}
