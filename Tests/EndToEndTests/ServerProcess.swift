import Foundation
import TestSupport

/// `depot serve` as a real process on a free port of 127.0.0.1, with its own storage directory.
final class ServerProcess: @unchecked Sendable {
    // @unchecked: `process` and `url` are set in init and only read afterwards.
    static let adminToken = "e2e-admin-token-0123456789"

    let storage: URL
    let process: ChildProcess
    private(set) var url: URL!

    /// Where the server's log goes; a server that does not start fails its test with the log's end.
    let logFile: URL

    /// Starts the server and waits (at most 60 s) for its "listening on" line.
    /// - Parameter log: A file for the server's log at its default level (`info`, a line per
    ///   request); without it the server logs warnings and errors only, to a file beside `storage`.
    /// - Parameter arguments: More `depot serve` options. Patches are made only when they name
    ///   `--patch-from` (a patch landing changes manifests, which many tests compare across requests).
    /// - Parameter environment: More environment variables (the object store's `AWS_*`).
    init(
        storage: URL, maximumUploadSize: Int? = nil, log: URL? = nil, arguments: [String] = [],
        environment: [String: String] = [:]
    ) throws {
        self.storage = storage
        let serve =
            ["serve", "--port", "0", "--storage", storage.path] + (log == nil ? ["--log-level", "warning"] : [])
            + (maximumUploadSize.map { ["--max-upload-size", "\($0)"] } ?? [])
            + (arguments.contains("--patch-from") ? [] : ["--patch-from", "0"])
            + arguments
        logFile = log ?? storage.deletingLastPathComponent().appendingPathComponent(storage.lastPathComponent + ".serve.log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let logHandle = try FileHandle(forWritingTo: logFile)
        defer { try? logHandle.close() }
        process = try ChildProcess(
            Binaries.depot.path, serve,
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }
                .merging(["DEPOT_ADMIN_TOKEN": Self.adminToken]) { $1 },
            standardOutput: .pipe, standardError: .file(logHandle))
        let line: String
        do {
            guard let output = process.standardOutput else { throw E2EFailure("depot serve has no output pipe") }
            line = try Self.readLine(output, containing: "listening on", within: 60)
        } catch {
            throw E2EFailure("\(error); the end of its log: \(String(logText.suffix(2000)))")
        }
        guard let address = line.split(separator: " ").last, let url = URL(string: String(address)) else {
            throw E2EFailure("depot serve printed '\(line)' instead of its address")
        }
        self.url = url
    }

    deinit {
        process.terminate()
        process.waitForExit()
    }

    /// Sends a signal and waits for the process to end; returns its exit status.
    @discardableResult
    func stop(signal: Int32) -> Int32 {
        process.send(signal)
        return process.waitForExit()
    }

    /// What the server has logged so far.
    var logText: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    var environment: [String: String] {
        ["DEPOT_SERVER": url.absoluteString, "DEPOT_TOKEN": Self.adminToken]
    }

    static func readLine(_ handle: FileHandle, containing text: String, within seconds: Double) throws -> String {
        let result = LineBox()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            var buffer = Data()
            while true {
                let chunk = handle.readChunk()
                if chunk.isEmpty { break }
                buffer.append(chunk)
                if let line = String(decoding: buffer, as: UTF8.self).split(separator: "\n").first(where: { $0.contains(text) }) {
                    result.set(String(line))
                    break
                }
            }
            done.signal()
        }
        guard done.wait(timeout: .now() + seconds) == .success, let line = result.value else {
            throw E2EFailure("depot serve did not print '\(text)' within \(seconds) s")
        }
        return line
    }
}

private final class LineBox: @unchecked Sendable {
    // @unchecked: written once by the reader before it signals, read after the wait.
    private let lock = NSLock()
    private var line: String?
    func set(_ value: String) { lock.withLock { line = value } }
    var value: String? { lock.withLock { line } }
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
