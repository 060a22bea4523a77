import Foundation

/// A finished program run.
struct CommandResult {
    let status: Int32
    let output: Data
    let error: String
    var text: String { String(decoding: output, as: UTF8.self) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(T.self, from: output)
    }
}

/// Runs programs: the real `depot` CLI, curl, python.
enum Command {
    static func depot(_ arguments: [String], environment: [String: String]) throws -> CommandResult {
        try run(Binaries.depot, arguments, environment: environment)
    }

    static func curl(_ arguments: [String]) throws -> CommandResult {
        try run(URL(fileURLWithPath: "/usr/bin/env"), ["curl", "-sS"] + arguments)
    }

    static func run(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws -> CommandResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        for name in ["DEPOT_SERVER", "DEPOT_TOKEN"] { merged[name] = nil }
        merged["DEPOT_CONFIG"] = FileManager.default.temporaryDirectory.appendingPathComponent("depot-e2e-no-config.json").path
        process.environment = merged.merging(environment) { $1 }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let errorData = DataBox()
        let errorDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            errorData.set(error.fileHandleForReading.readDataToEndOfFile())
            errorDone.signal()
        }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        errorDone.wait()
        return CommandResult(status: process.terminationStatus, output: outputData,
                             error: String(decoding: errorData.value, as: UTF8.self))
    }

    /// Starts a program without waiting for it.
    static func start(_ executable: URL, _ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }
}

private final class DataBox: @unchecked Sendable {
    // @unchecked: written once before the semaphore is signalled, read after the wait.
    private let lock = NSLock()
    private var data = Data()
    func set(_ value: Data) { lock.withLock { data = value } }
    var value: Data { lock.withLock { data } }
}
