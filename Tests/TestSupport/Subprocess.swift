import Foundation

#if canImport(Glibc)
    import Glibc
    private let systemRead = Glibc.read
#else
    import Darwin
    private let systemRead = Darwin.read
#endif

/// Runs programs for tests: to completion, capturing what they print, or in the background.
public enum Subprocess {
    /// A finished run.
    public struct Output: Sendable {
        public let status: Int32
        public let output: Data
        public let error: String

        public var text: String { String(decoding: output, as: UTF8.self) }

        /// This run, if it exited 0; otherwise throws ``Failed`` with its status and what it printed
        /// to stderr (a setup step that fails stops its test there, naming why).
        @discardableResult
        public func succeeded() throws -> Output {
            guard status == 0 else { throw Failed(status: status, error: error) }
            return self
        }

        public func decode<T: Decodable>(_ type: T.Type) throws -> T {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return try decoder.decode(T.self, from: output)
        }
    }

    /// A run that should have exited 0.
    public struct Failed: Error, CustomStringConvertible {
        public let status: Int32
        public let error: String
        public var description: String { "exited \(status): \(error)" }
    }

    /// Runs a program to completion. `environment` replaces the inherited variables it names
    /// (`nil` values remove them).
    public static func run(_ executable: URL, _ arguments: [String], environment: [String: String?] = [:]) throws -> Output {
        var merged = ProcessInfo.processInfo.environment
        for (name, value) in environment { merged[name] = value }
        let process = try ChildProcess(executable.path, arguments, environment: merged, standardOutput: .pipe, standardError: .pipe)
        // Read both pipes at once so that neither fills up and blocks the child.
        let errorData = DataBox()
        let errorRead = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            errorData.set(process.standardError?.readAll() ?? Data())
            errorRead.signal()
        }
        let outputData = process.standardOutput?.readAll() ?? Data()
        let status = process.waitForExit()
        errorRead.wait()
        return Output(status: status, output: outputData, error: String(decoding: errorData.value, as: UTF8.self))
    }

    /// Runs a program found on the PATH.
    public static func run(_ program: String, _ arguments: [String], environment: [String: String?] = [:]) throws -> Output {
        try run(URL(fileURLWithPath: "/usr/bin/env"), [program] + arguments, environment: environment)
    }

    /// ``run(_:_:environment:)-(URL,_,_)`` for async code: the wait happens on a thread of its
    /// own, so the cooperative pool (two threads on two cores) goes on running the servers and
    /// clients the test talks to.
    public static func run(_ executable: URL, _ arguments: [String], environment: [String: String?] = [:]) async throws -> Output {
        try await onOwnThread { try run(executable, arguments, environment: environment) }
    }

    /// ``run(_:_:environment:)-(String,_,_)`` for async code, waited for on a thread of its own.
    public static func run(_ program: String, _ arguments: [String], environment: [String: String?] = [:]) async throws -> Output {
        try await onOwnThread { try run(program, arguments, environment: environment) }
    }

    /// Runs blocking work on a new thread and waits for it without holding a pool thread.
    public static func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result(catching: work)) }.start()
        }
    }

    /// Starts a program found on the PATH without waiting for it; its output is discarded.
    public static func start(_ program: String, _ arguments: [String]) throws -> ChildProcess {
        try ChildProcess("/usr/bin/env", [program] + arguments)
    }
}

private final class DataBox: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var data = Data()
    func set(_ value: Data) { lock.withLock { data = value } }
    var value: Data { lock.withLock { data } }
}

extension FileHandle {
    /// The next bytes (at most 64 KiB), waiting for them; empty at the end. Not `availableData`,
    /// whose `try!` ends the process when a signal interrupts the read (seen here: a child's
    /// SIGCHLD, in the middle of a test run): an interrupted read is tried again.
    public func readChunk() -> Data {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { systemRead(fileDescriptor, $0.baseAddress, $0.count) }
            if count >= 0 { return Data(buffer.prefix(count)) }
            if errno != EINTR { return Data() }
        }
    }

    /// Everything until the end (see ``readChunk()``).
    public func readAll() -> Data {
        var data = Data()
        while true {
            let chunk = readChunk()
            if chunk.isEmpty { return data }
            data.append(chunk)
        }
    }
}
