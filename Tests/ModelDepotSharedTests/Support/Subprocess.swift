import Foundation

/// Runs a program to completion and captures what it printed.
struct Subprocess {
    struct Output {
        let status: Int32
        let standardOutput: Data
        let standardError: String
        var text: String { String(decoding: standardOutput, as: UTF8.self) }
    }

    static func run(_ executable: URL, _ arguments: [String]) throws -> Output {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Read both pipes concurrently so that neither fills up and blocks the child.
        let errorData = LockedData()
        let errorRead = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            errorData.set(error.fileHandleForReading.readDataToEndOfFile())
            errorRead.signal()
        }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        errorRead.wait()
        return Output(status: process.terminationStatus, standardOutput: outputData,
                      standardError: String(decoding: errorData.value, as: UTF8.self))
    }

    static func python(_ script: String, _ arguments: [String]) throws -> Output {
        try run(URL(fileURLWithPath: "/usr/bin/env"),
                ["python3", Repository.tfliteScripts.appendingPathComponent(script).path] + arguments)
    }
}

private final class LockedData: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var data: Data?

    func set(_ value: Data) { lock.withLock { data = value } }
    var value: Data { lock.withLock { data ?? Data() } }
}
