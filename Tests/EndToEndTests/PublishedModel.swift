import Crypto
import Foundation
import ModelDepot
import ModelDepotShared
import Testing

/// A running `depot serve` with root document v1 signed by a fresh root key, the model `flowers`
/// (the given fixtures uploaded and published, in order) and a read-only app key: what the SDK's
/// end-to-end tests start from.
final class PublishedModel {
    let scratch: Scratch
    let server: ServerProcess
    let appKey: String
    /// The root key file (`depot keys root generate`) and its public key, which the SDK pins.
    let root: (file: String, publicKey: String)

    /// - Parameter arguments: More `depot serve` options.
    /// - Parameter environment: More environment variables for the server.
    init(_ fixtures: [String] = ["float_classifier"], arguments: [String] = [], environment: [String: String] = [:]) async throws {
        scratch = try Scratch()
        server = try await ServerProcess(
            storage: scratch.url.appendingPathComponent("storage"), arguments: arguments, environment: environment)
        root = try await server.initializeRoot(keyFile: scratch.path("root.key"))
        try await Command.depot(["models", "create", "flowers"], environment: server.environment).succeeded()
        for fixture in fixtures {
            try await Command.depot(["upload", "flowers", Binaries.fixture(fixture), "--publish"], environment: server.environment)
                .succeeded()
        }
        appKey = try await Command.depot(["keys", "create", "--app", "--json"], environment: server.environment).decode(
            CreatedAccessKey.self
        )
        .secret
    }

    /// The SDK's cache directory for this test.
    var cache: URL { scratch.url.appendingPathComponent("cache") }

    /// A downloader for this server and cache, with whatever the test changes in its configuration.
    func downloader(_ change: (inout ModelDownloaderConfiguration) -> Void = { _ in }) throws -> ModelDownloader {
        var configuration = ModelDownloaderConfiguration(
            serverURL: server.url, appKey: appKey, trustedRoot: .publicKey(root.publicKey),
            cacheDirectory: cache)
        change(&configuration)
        return try ModelDownloader(configuration: configuration)
    }
}

extension PublishedModel {
    /// The online key that signed `manifest`, as an attacker who stole it from the server has it.
    func stolenKey(thatSigned manifest: Data) throws -> Curve25519.Signing.PrivateKey {
        let keyID = try #require(try JSONDecoder().decode(SignedEnvelope.self, from: manifest).signatures.first?.keyid)
        let file = server.storage.appendingPathComponent("keys/\(keyID).ed25519")
        return try Curve25519.Signing.PrivateKey(fileText: String(contentsOf: file, encoding: .utf8), path: "stolen")
    }
}

extension ServerProcess {
    /// Makes a root key with the real CLI and publishes root document v1 with it.
    func initializeRoot(keyFile: String) async throws -> (file: String, publicKey: String) {
        let key = try await Command.depot(["keys", "root", "generate", "--out", keyFile, "--json"], environment: environment)
            .decode(PublicSigningKey.self)
        let initialized = try await Command.depot(["keys", "root", "init", "--root-key", keyFile], environment: environment)
        guard initialized.status == 0 else { throw E2EFailure("depot keys root init failed: \(initialized.error)") }
        return (keyFile, key.publicKey)
    }

    /// Creates model `flowers` and publishes a generated valid model of `megabytes` MiB as its
    /// first version (the file is written into `scratch`).
    func publishLargeModel(megabytes: Int, seed: UInt8, in scratch: Scratch) async throws -> ModelVersion {
        try CrashSafetyTests.largeModel(scratch.path("large.tflite"), megabytes: megabytes, seed: seed)
        try await Command.depot(["models", "create", "flowers"], environment: environment).succeeded()
        return try await Command.depot(
            ["upload", "flowers", scratch.path("large.tflite"), "--publish", "--json"], environment: environment
        )
        .decode(ModelVersion.self)
    }

    /// The value of one line of `/metrics` (0 when the line is absent).
    func metric(_ line: String) async throws -> Int {
        let text = try await Command.curl(["\(url.absoluteString)/metrics"]).text
        guard let row = text.split(separator: "\n").first(where: { $0.hasPrefix(line + " ") }) else { return 0 }
        return Int(row.split(separator: " ").last ?? "") ?? 0
    }
}
