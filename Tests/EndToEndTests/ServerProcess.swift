import Foundation
import TestSupport

/// `depot serve` as a real process on a free port of 127.0.0.1, with its own storage directory.
final class ServerProcess: Sendable {
    static let adminToken = "e2e-admin-token-0123456789"

    let storage: URL
    let process: RunningProgram
    let url: URL

    /// Where the server's log goes; a server that does not start fails its test with the log's end.
    let logFile: URL

    /// Starts the server and waits (at most 60 s) for the address it writes to its `--ready-file`
    /// once it listens (it prints the same on stdout).
    /// - Parameter log: A file for the server's log at its default level (`info`, a line per
    ///   request); without it the server logs warnings and errors only, to a file beside `storage`.
    /// - Parameter arguments: More `depot serve` options. Patches are made only when they name
    ///   `--patch-from` (a patch landing changes manifests, which many tests compare across requests).
    /// - Parameter environment: More environment variables (the object store's `AWS_*`).
    init(
        storage: URL, maximumUploadSize: Int? = nil, log: URL? = nil, arguments: [String] = [],
        environment: [String: String] = [:]
    ) async throws {
        self.storage = storage
        let ready = storage.deletingLastPathComponent().appendingPathComponent(storage.lastPathComponent + ".ready")
        let serve =
            ["serve", "--port", "0", "--storage", storage.path, "--ready-file", ready.path]
            + (log == nil ? ["--log-level", "warning"] : [])
            + (maximumUploadSize.map { ["--max-upload-size", "\($0)"] } ?? [])
            + (arguments.contains("--patch-from") ? [] : ["--patch-from", "0"])
            + arguments
        let logFile = log ?? storage.deletingLastPathComponent().appendingPathComponent(storage.lastPathComponent + ".serve.log")
        self.logFile = logFile
        var settings: [String: String?] = environment
        settings["DEPOT_ADMIN_TOKEN"] = Self.adminToken
        process = try await RunningProgram.start(Binaries.depot.path, serve, environment: settings, standardError: .file(logFile))
        do {
            _ = try await process.line(containing: "listening on", within: 60)
            let written = try String(contentsOf: ready, encoding: .utf8).trimmingCharacters(in: .newlines)
            guard let url = URL(string: written), url.port != nil else {
                throw E2EFailure("depot serve wrote '\(written)' to its ready file")
            }
            self.url = url
        } catch {
            throw E2EFailure("\(error); the end of its log: \(String(Self.text(of: logFile).suffix(2000)))")
        }
    }

    /// Sends a signal and waits for the process to end; returns its exit status.
    @discardableResult
    func stop(signal: Int32) async throws -> Int32 {
        try await process.stop(signal)
    }

    /// What the server has logged so far.
    var logText: String { Self.text(of: logFile) }

    private static func text(of file: URL) -> String { (try? String(contentsOf: file, encoding: .utf8)) ?? "" }

    var environment: [String: String] {
        ["DEPOT_SERVER": url.absoluteString, "DEPOT_TOKEN": Self.adminToken]
    }
}

struct E2EFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Executables and files the end-to-end tests use.
enum Binaries {
    static let depot = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent().appendingPathComponent("depot")
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let fixtures = repository.appendingPathComponent("Tests/Fixtures/tflite")

    static func fixture(_ name: String) -> String { fixtures.appendingPathComponent(name + ".tflite").path }
}

/// A directory removed when the value goes away.
final class Scratch {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("depot-e2e-\(UUID().uuidString)")
    init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(at: url) }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}
