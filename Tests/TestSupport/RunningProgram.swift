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
/// SIGTERM and collected in the background. It counts as ended once it closes its stdout.
public final class RunningProgram: Sendable {
    /// Where the program's stderr goes.
    public enum ErrorOutput: Sendable {
        case discarded
        /// Appended to this file.
        case file(URL)
    }

    public let processIdentifier: pid_t
    private let state: ProcessState
    private let lines: AsyncStream<String>
    private let ended: Task<Int32, any Error>

    private init(processIdentifier: pid_t, state: ProcessState, lines: AsyncStream<String>, ended: Task<Int32, any Error>) {
        (self.processIdentifier, self.state, self.lines, self.ended) = (processIdentifier, state, lines, ended)
    }

    /// Starts `executable` (a path, or a name looked up on the PATH) and returns once it runs.
    /// `environment` replaces the inherited variables it names (`nil` values remove them).
    public static func start(
        _ executable: String, _ arguments: [String], environment: [String: String?] = [:],
        standardError: ErrorOutput = .discarded
    ) async throws -> RunningProgram {
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
        let state = ProcessState()
        let ended = Task {
            do {
                let result = try await Subprocess.run(
                    Program.executable(executable), arguments: Arguments(arguments),
                    environment: Program.environment(environment), input: .none, output: .sequence, error: errorOutput
                ) { execution in
                    state.started(execution.processIdentifier.value)
                    // The program runs until it closes its stdout; it is collected once this returns.
                    do {
                        for try await line in execution.standardOutput.strings() { printed.yield(line) }
                    } catch {}
                    printed.finish()
                    state.ended()
                }
                return result.terminationStatus.code
            } catch {
                state.failed(error)
                throw error
            }
        }
        return RunningProgram(processIdentifier: try await state.processIdentifier(), state: state, lines: lines, ended: ended)
    }

    deinit { state.send(SIGTERM) }

    /// Sends `signal` at once, unless the program has ended (its process id may be another's then).
    public func send(_ signal: Int32) { state.send(signal) }

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

/// The program's process id and whether it has ended, shared by the task that runs it and the
/// test: a signal goes straight to the process while it has not ended, so a busy cooperative pool
/// does not delay it, and never after (the program is collected only once it has ended).
private final class ProcessState: Sendable {
    private struct State {
        var processIdentifier: pid_t?
        var failure: (any Error)?
        var ended = false
        var waiter: CheckedContinuation<pid_t, any Error>?
    }

    private let state = Mutex(State())

    func started(_ processIdentifier: pid_t) {
        let waiter = state.withLock { state in
            state.processIdentifier = processIdentifier
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: processIdentifier)
    }

    /// The program could not be started.
    func failed(_ error: any Error) {
        let waiter = state.withLock { state in
            state.failure = error
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(throwing: error)
    }

    func ended() { state.withLock { $0.ended = true } }

    func send(_ signal: Int32) {
        state.withLock { state in
            if let processIdentifier = state.processIdentifier, !state.ended { kill(processIdentifier, signal) }
        }
    }

    /// The process id once the program runs, or the reason it could not be started.
    func processIdentifier() async throws -> pid_t {
        try await withCheckedThrowingContinuation { continuation in
            let known = state.withLock { state -> Result<pid_t, any Error>? in
                if let processIdentifier = state.processIdentifier { return .success(processIdentifier) }
                if let failure = state.failure { return .failure(failure) }
                state.waiter = continuation
                return nil
            }
            if let known { continuation.resume(with: known) }
        }
    }
}
