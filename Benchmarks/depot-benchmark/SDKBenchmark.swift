import Crypto
import Foundation
import ModelDepot
import ModelDepotShared

/// The SDK's side of scripts/bench/sdk.
enum SDKBenchmark {
    /// What the SDK does to a downloaded file before installing it: SHA-256 read in 1 MiB
    /// pieces, then TFLite verification of the mapped file.
    static func verify(_ path: String) throws {
        let digest = try SHA256.digest(ofFileAt: path).hex
        let model = try MappedFile(path: path).withBytes { bytes throws(DepotError) in try TFLiteVerifier().verify(bytes) }
        print(digest, model.inputs.count, "inputs")
    }

    /// One `ModelDownloader.model(named:)` into an empty cache: manifest, download, verify, install;
    /// through the platform's default transport, or `URLSessionTransport` when `urlSession` says so.
    static func install(server: String, key: String, rootKey: String, model: String, cache: String, urlSession: Bool) async throws {
        let transport: any ModelTransport = urlSession ? URLSessionTransport() : defaultModelTransport()
        let downloader = try ModelDownloader(
            configuration: .init(
                serverURL: URL(string: server)!, appKey: key, trustedRoot: .publicKey(rootKey),
                cacheDirectory: URL(fileURLWithPath: cache), transport: transport))
        let installed = try await downloader.model(named: model)
        print(installed.sha256, installed.fileURL.path)
    }
}
