import Foundation
import Subprocess
import Synchronization

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// A program a test runs in the background (a `depot serve`, nginx, chromedriver, a curl
/// download), on swift-subprocess: its exit is awaited, never waited for on a thread, and the
/// lines it prints on stdout arrive as they come (how a server says it is ready).
///
/// The program runs until it ends or is sent a signal; when the value goes away it is sent
/// SIGTERM and collected in the background.
public final class RunningProgram: Sendable {
    /// Where the program's stderr goes.
    public enum ErrorOutput: Sendable {
        case discarded
        /// Appended to this file.
        case file(URL)
    }

    public let processIdentifier: pid_t
    private let signals: AsyncStream<Int32>.Continuation
    private let lines: AsyncStream<String>
    private let ended: Task<Int32, any Error>

    private init(
        processIdentifier: pid_t, signals: AsyncStream<Int32>.Continuation, lines: AsyncStream<String>,
        ended: Task<Int32, any Error>
    ) {
        (self.processIdentifier, self.signals, self.lines, self.ended) = (processIdentifier, signals, lines, ended)
    }

    /// Starts `executable` (a path, or a name looked up on the PATH) and returns once it runs.
    /// `environment` replaces the inherited variables it names (`nil` values remove them).
    public static func start(
        _ executable: String, _ arguments: [String], environment: [String: String?] = [:],
        standardError: ErrorOutput = .discarded
    ) async throws -> RunningProgram {
        let (signals, signalled) = AsyncStream<Int32>.makeStream()
        let (lines, printed) = AsyncStream<String>.makeStream()
        let errorOutput: FileDescriptorOutput
        switch standardError {
        case .discarded:
            errorOutput = .fileDescriptor(try FileDescriptor.open("/dev/null", .writeOnly), closeAfterSpawningProcess: true)
        case .file(let url):
            errorOutput = .fileDescriptor(
                try FileDescriptor.open(
                    FilePath(url.path), .writeOnly, options: [.create, .append], permissions: [.ownerReadWrite]),
                closeAfterSpawningProcess: true)
        }
        let started = Started()
        let ended = Task {
            do {
                let result = try await Subprocess.run(
                    executable.contains("/") ? .path(FilePath(executable)) : .name(executable), arguments: Arguments(arguments),
                    environment: Program.environment(environment), input: .none, output: .sequence, error: errorOutput
                ) { execution in
                    started.resume(with: .success(execution.processIdentifier.value))
                    // Signals are forwarded until the program closes its stdout (it ended).
                    await withTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for await signal in signals { try? execution.send(signal: Signal(rawValue: signal)) }
                        }
                        do {
                            for try await line in execution.standardOutput.strings() { printed.yield(line) }
                        } catch {}
                        printed.finish()
                        group.cancelAll()
                    }
                }
                return result.terminationStatus.code
            } catch {
                started.resume(with: .failure(error))
                throw error
            }
        }
        return RunningProgram(processIdentifier: try await started.value(), signals: signalled, lines: lines, ended: ended)
    }

    deinit { signals.yield(SIGTERM) }

    /// Sends `signal` (if the program still runs).
    public func send(_ signal: Int32) { signals.yield(signal) }

    /// Waits for the program to end; returns its exit code, or the number of the signal that ended it.
    @discardableResult
    public func exit() async throws -> Int32 { try await ended.value }

    /// Sends `signal` and waits for the program to end.
    @discardableResult
    public func stop(_ signal: Int32 = SIGTERM) async throws -> Int32 {
        send(signal)
        return try await exit()
    }

    /// The next line the program prints on stdout; `nil` once it closed its stdout.
    public func nextLine() async -> String? {
        var iterator = lines.makeAsyncIterator()
        return await iterator.next()
    }

    /// The first line from now on that contains `text`, waiting at most `seconds`; throws when
    /// the program ends first or the time is up.
    public func line(containing text: String, within seconds: Double) async throws -> String {
        try await withThrowingTaskGroup(of: String.self) { group in
            group.addTask {
                while let line = await self.nextLine() {
                    if line.contains(text) { return line }
                }
                throw NotPrinted(description: "the program ended without printing '\(text)'")
            }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                throw NotPrinted(description: "the program did not print '\(text)' within \(seconds) s")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    /// A line a program did not print.
    public struct NotPrinted: Error, CustomStringConvertible {
        public let description: String
    }
}

/// The process id, handed from the task that runs the program to the one that started it, once.
private final class Started: Sendable {
    private let state = Mutex<(result: Result<pid_t, any Error>?, waiter: CheckedContinuation<pid_t, any Error>?)>((nil, nil))

    func resume(with result: Result<pid_t, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<pid_t, any Error>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result)
    }

    /// The process id, or the launch's error.
    func value() async throws -> pid_t {
        try await withCheckedThrowingContinuation { continuation in
            let result = state.withLock { state -> Result<pid_t, any Error>? in
                if state.result == nil { state.waiter = continuation }
                return state.result
            }
            if let result { continuation.resume(with: result) }
        }
    }
}
