import Foundation
import ModelDepot
import ModelDepotShared

/// A running `depot serve` with the model `flowers` (the given fixtures uploaded and published,
/// in order) and a read-only app key: what the SDK's end-to-end tests start from.
final class PublishedModel {
    let scratch: Scratch
    let server: ServerProcess
    let appKey: String

    init(_ fixtures: [String] = ["float_classifier"]) throws {
        scratch = try Scratch()
        server = try ServerProcess(storage: scratch.url.appendingPathComponent("storage"))
        _ = try Command.depot(["models", "create", "flowers"], environment: server.environment)
        for fixture in fixtures {
            _ = try Command.depot(["upload", "flowers", Binaries.fixture(fixture), "--publish"], environment: server.environment)
        }
        appKey = try Command.depot(["keys", "create", "--app", "--json"], environment: server.environment).decode(CreatedAccessKey.self).secret
    }

    /// The SDK's cache directory for this test.
    var cache: URL { scratch.url.appendingPathComponent("cache") }

    /// A downloader for this server and cache, with whatever the test changes in its configuration.
    func downloader(_ change: (inout ModelDownloaderConfiguration) -> Void = { _ in }) throws -> ModelDownloader {
        var configuration = ModelDownloaderConfiguration(serverURL: server.url, appKey: appKey, cacheDirectory: cache)
        change(&configuration)
        return try ModelDownloader(configuration: configuration)
    }
}

extension ServerProcess {
    /// The value of one line of `/metrics` (0 when the line is absent).
    func metric(_ line: String) throws -> Int {
        let text = try Command.curl(["\(url.absoluteString)/metrics"]).text
        guard let row = text.split(separator: "\n").first(where: { $0.hasPrefix(line + " ") }) else { return 0 }
        return Int(row.split(separator: " ").last ?? "") ?? 0
    }
}
