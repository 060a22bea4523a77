import Crypto
import Foundation
import ModelDepot
import ModelDepotShared
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The SDK's downloader against a real `depot serve` over URLSession.
@Suite struct ModelDownloaderEndToEndTests {
    struct Setup {
        let published: PublishedModel
        let downloader: ModelDownloader
        var server: ServerProcess { published.server }
        var scratch: Scratch { published.scratch }
        var cache: URL { published.cache }
    }

    func setUp(publish fixtures: [String] = ["float_classifier"]) async throws -> Setup {
        let published = try await PublishedModel(fixtures)
        return Setup(published: published, downloader: try published.downloader { $0.device = DeviceContext(platform: "linux") })
    }

    @Test func firstDownloadInstallsAVerifiedModelAndTheNextCheckIs304() async throws {
        let setup = try await setUp()
        let model = try await setup.downloader.model(named: "flowers")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Binaries.fixture("float_classifier")))
        #expect(model.version == 1)
        #expect(try Data(contentsOf: model.fileURL) == bytes)
        #expect(model.description.inputs.map(\.name) == ["image"])
        #expect(await setup.downloader.latestModelFilePath("flowers") == model.fileURL)

        let served = try await setup.server.metric("depot_blob_bytes_served_total")
        let again = try await setup.downloader.model(named: "flowers")
        #expect(again.fileURL == model.fileURL)
        await #expect(try setup.server.metric(#"depot_manifest_responses_total{status="304"}"#) == 1)
        await #expect(try setup.server.metric("depot_blob_bytes_served_total") == served)
    }

    @Test func installationIDIsPersistedUnlessTheAppGivesOne() throws {
        let scratch = try Scratch()
        let cache = scratch.url.appendingPathComponent("cache")
        let server = URL(string: "http://127.0.0.1:9")!
        let first = try ModelDownloader(
            configuration: .init(serverURL: server, appKey: "k", trustedRoot: .publicKey(""), cacheDirectory: cache))
        let second = try ModelDownloader(
            configuration: .init(serverURL: server, appKey: "k", trustedRoot: .publicKey(""), cacheDirectory: cache))
        #expect(first.installationID == second.installationID)
        #expect(UUID(uuidString: first.installationID) != nil)
        let given = try ModelDownloader(
            configuration: .init(
                serverURL: server, appKey: "k", trustedRoot: .publicKey(""),
                installationID: "Device-ABC", cacheDirectory: cache))
        #expect(given.installationID == "device-abc")
    }

    @Test func concurrentRequestsForOneModelShareOneDownload() async throws {
        let setup = try await setUp(publish: ["float_classifier_labels"])
        let downloader = setup.downloader
        async let first = downloader.model(named: "flowers")
        async let second = downloader.model(named: "flowers")
        async let third = downloader.model(named: "flowers")
        let models = try await [first, second, third]
        #expect(Set(models.map(\.fileURL)).count == 1)
        await #expect(try setup.server.metric("depot_blob_bytes_served_total") == 1127, "the file went over the wire once")
        await #expect(try setup.server.metric(#"depot_manifest_responses_total{status="200"}"#) == 1, "one check for the three callers")
        await #expect(try setup.server.metric(#"depot_manifest_responses_total{status="304"}"#) == 0)
    }

    @Test func newlyPublishedVersionReplacesTheOldOneWhichIsKept() async throws {
        let setup = try await setUp()
        let first = try await setup.downloader.model(named: "flowers")
        try await Command.depot(["upload", "flowers", Binaries.fixture("int8_conv"), "--publish"], environment: setup.server.environment)
            .succeeded()
        let second = try await setup.downloader.model(named: "flowers")
        #expect(second.version == 2)
        #expect(await setup.downloader.latestModelFilePath("flowers") == second.fileURL)
        #expect(FileManager.default.fileExists(atPath: first.fileURL.path), "the previous version stays for a rollback")
        #expect(await setup.downloader.listDownloadedModels().map(\.version) == [2])
    }

    /// The server refuses to send a file changed on its disk (a `500` naming a request id); the
    /// SDK keeps the current model. (Wrong bytes that do reach a device, from a proxy, are
    /// `UpdateSecurityEndToEndTests.swappedBlobIsRefused`.)
    @Test func aBlobChangedOnTheServersDiskIsNotDeliveredAndTheCurrentModelStays() async throws {
        let setup = try await setUp()
        let first = try await setup.downloader.model(named: "flowers")
        let version = try await Command.depot(
            ["upload", "flowers", Binaries.fixture("int8_conv"), "--publish", "--json"],
            environment: setup.server.environment
        ).decode(ModelVersion.self)
        let blob = setup.server.storage.appendingPathComponent("blobs/sha256/\(version.sha256.prefix(2))/\(version.sha256)")
        var bytes = try Data(contentsOf: blob)
        bytes[bytes.count / 2] ^= 0xff
        try bytes.write(to: blob)

        let refused = await #expect(throws: DepotError.self) { try await setup.downloader.model(named: "flowers") }
        #expect(refused?.code == .internalError)
        do {
            _ = try await setup.downloader.model(named: "flowers")
        } catch let error as DepotError {
            #expect(error.code == .internalError)
            #expect(error.message.contains("request id") && error.message.contains("The current model (v1) stays in use."), "\(error)")
        }
        #expect(await setup.downloader.latestModelFilePath("flowers") == first.fileURL)
        #expect(try FileManager.default.contentsOfDirectory(atPath: setup.cache.appendingPathComponent("partial").path).isEmpty)
    }

    @Test func interruptedDownloadResumesWhereItStopped() async throws {
        let setup = try await setUp(publish: ["float_classifier_labels"])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Binaries.fixture("float_classifier_labels")))
        let sha = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        // What a download cut off after 600 bytes leaves behind.
        try bytes.prefix(600).write(to: setup.cache.appendingPathComponent("partial/\(sha).part"))

        let model = try await setup.downloader.model(named: "flowers")
        #expect(try Data(contentsOf: model.fileURL) == bytes)
        await #expect(try setup.server.metric("depot_blob_bytes_served_total") == bytes.count - 600)
    }

    @Test func offlineTheDownloadedModelIsUsedAndLocalModelNeedsOne() async throws {
        let setup = try await setUp()
        await #expect(
            throws: DepotError(.notFound, "No model 'flowers' has been downloaded yet; download it with the latestModel policy first.")
        ) {
            try await setup.downloader.model(named: "flowers", policy: .localModel)
        }
        let model = try await setup.downloader.model(named: "flowers")
        try await setup.server.stop(signal: SIGTERM)
        #expect(try await setup.downloader.model(named: "flowers").fileURL == model.fileURL)
        #expect(try await setup.downloader.model(named: "flowers", policy: .localModel).version == 1)

        let empty = try ModelDownloader(
            configuration: .init(
                serverURL: setup.server.url, appKey: "x",
                trustedRoot: .publicKey(setup.published.root.publicKey),
                cacheDirectory: setup.scratch.url.appendingPathComponent("empty")))
        do {
            _ = try await empty.model(named: "flowers")
            Issue.record("a download without a server succeeded")
        } catch let error as DepotError {
            #expect(error.code == .unavailable)
            #expect(error.message.contains("No model 'flowers' is downloaded yet."))
        }
    }

    @Test func expectedInputsThatDoNotMatchRejectTheModel() async throws {
        let setup = try await setUp()
        let expectation = TFLiteIOExpectation(inputs: [.init(index: 0, type: .uint8, shape: [1, 4])])
        do {
            _ = try await setup.downloader.model(named: "flowers", expectation: expectation)
            Issue.record("a model with other inputs was accepted")
        } catch let error as DepotError {
            #expect(error.code == .signatureMismatch)
        }
        #expect(await setup.downloader.latestModelFilePath("flowers") == nil)

        // A downloaded model is held to the expectation on every path: local, up to date, joined.
        let installed = try await setup.downloader.model(named: "flowers")
        for policy in [DownloadPolicy.localModel, .latestModel, .localModelUpdateInBackground] {
            let error = await #expect(throws: DepotError.self) {
                try await setup.downloader.model(named: "flowers", policy: policy, expectation: expectation)
            }
            #expect(error?.code == .signatureMismatch, "\(policy)")
        }
        #expect(await setup.downloader.latestModelFilePath("flowers") == installed.fileURL)
    }
}

/// A download cut by a server that dies in the middle, then resumed against the restarted server.
@Suite struct InterruptedDownloadEndToEndTests {
    /// URLSession, but the server is SIGKILLed right after the first range arrives.
    final class KillAfterFirstRange: ModelTransport, @unchecked Sendable {
        // @unchecked: `ranges` is only touched by the downloader's actor, one call at a time.
        let real = URLSessionTransport()
        let server: ServerProcess
        var ranges = 0

        init(server: ServerProcess) { self.server = server }

        func data(for request: URLRequest, limits: TransferLimits) async throws -> (Data, HTTPURLResponse) {
            try await real.data(for: request, limits: limits)
        }

        func download(_ request: URLRequest, limits: TransferLimits) async throws -> (URL, HTTPURLResponse) {
            let result = try await real.download(request, limits: limits)
            ranges += 1
            if ranges == 1 { try await server.stop(signal: SIGKILL) }
            return result
        }
    }

    @Test func downloadCutByAKilledServerResumesWhereItStopped() async throws {
        let scratch = try Scratch()
        let storage = scratch.url.appendingPathComponent("storage")
        let server = try await ServerProcess(storage: storage)
        let root = try await server.initializeRoot(keyFile: scratch.path("root.key"))
        try CrashSafetyTests.largeModel(scratch.path("large.tflite"), megabytes: 1, seed: 3)
        try await Command.depot(["models", "create", "flowers"], environment: server.environment).succeeded()
        let version = try await Command.depot(
            ["upload", "flowers", scratch.path("large.tflite"), "--publish", "--json"],
            environment: server.environment
        ).decode(ModelVersion.self)
        let key = try await Command.depot(["keys", "create", "--app", "--json"], environment: server.environment).decode(
            CreatedAccessKey.self)
        let cache = scratch.url.appendingPathComponent("cache")
        let chunk = 256 * 1024
        var configuration = ModelDownloaderConfiguration(
            serverURL: server.url, appKey: key.secret, trustedRoot: .publicKey(root.publicKey),
            cacheDirectory: cache,
            transport: KillAfterFirstRange(server: server))
        configuration.downloadChunkSize = chunk
        do {
            _ = try await ModelDownloader(configuration: configuration).model(named: "flowers")
            Issue.record("the download finished although the server died")
        } catch let error as DepotError {
            #expect(error.code == .unavailable)
            #expect(error.message.contains("resumes from byte \(chunk) next time"))
        }
        let partial = cache.appendingPathComponent("partial/\(version.sha256).part")
        #expect((try FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? NSNumber)?.intValue == chunk)

        let restarted = try await ServerProcess(storage: storage)
        configuration.serverURL = restarted.url
        configuration.transport = URLSessionTransport()
        let model = try await ModelDownloader(configuration: configuration).model(named: "flowers")
        #expect(model.sha256 == version.sha256)
        let metrics = try await Command.curl(["\(restarted.url.absoluteString)/metrics"]).text
        #expect(metrics.contains("depot_blob_bytes_served_total \(version.size - chunk)\n"), "only the missing bytes are sent again")
    }
}
