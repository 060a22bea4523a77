import Foundation
import ModelDepot
import ModelDepotShared
import TestSupport
import Testing

/// The ML Kit-style surface: RemoteModel, download → Progress, isModelDownloaded, delete, and
/// a bundled LocalModel as the last fallback.
@Suite struct MLKitStyleEndToEndTests {
    func setUp() throws -> (Scratch, ServerProcess, ModelDownloader) {
        let scratch = try Scratch()
        let server = try ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        _ = try Command.depot(["models", "create", "flowers"], environment: server.environment)
        _ = try Command.depot(["upload", "flowers", Binaries.fixture("float_classifier_labels"), "--publish"], environment: server.environment)
        let key = try Command.depot(["keys", "create", "--app", "--json"], environment: server.environment).decode(CreatedAccessKey.self)
        var configuration = ModelDownloaderConfiguration(serverURL: server.url, appKey: key.secret,
                                                         cacheDirectory: scratch.url.appendingPathComponent("cache"))
        configuration.downloadChunkSize = 256
        return (scratch, server, try ModelDownloader(configuration: configuration))
    }

    @Test func downloadReportsProgressAndTheModelIsThenDownloaded() async throws {
        let (scratch, server, downloader) = try setUp()
        defer { withExtendedLifetime((scratch, server)) {} }
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
        let (scratch, server, downloader) = try setUp()
        defer { withExtendedLifetime((scratch, server)) {} }
        let progress = await downloader.download(RemoteModel(name: "nothing"))
        await #expect(throws: DepotError.self) { try await downloader.model(named: "nothing") }
        #expect(progress.isCancelled)
    }

    @Test func bundledModelIsTheLastFallbackAndIsVerified() async throws {
        let (scratch, server, downloader) = try setUp()
        server.stop(signal: SIGTERM)
        defer { withExtendedLifetime(scratch) {} }
        let bundled = LocalModel(fileURL: URL(fileURLWithPath: Binaries.fixture("int8_conv")))
        let model = try await downloader.model(named: "flowers", fallback: bundled)
        #expect(model.version == 0 && model.manifest.arm == "bundled")
        #expect(model.description.inputs.first?.type == .int8)

        let broken = LocalModel(fileURL: URL(fileURLWithPath: Binaries.fixture("invalid/no_subgraphs")))
        await #expect(throws: DepotError.self) { try await downloader.model(named: "flowers", fallback: broken) }
    }
}
