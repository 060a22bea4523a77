import Foundation

#if canImport(Glibc)
    import Glibc
    private typealias SpawnActions = posix_spawn_file_actions_t
    private typealias SpawnAttributes = posix_spawnattr_t
    private func noActions() -> SpawnActions { SpawnActions() }
    private func noAttributes() -> SpawnAttributes { SpawnAttributes() }
#else
    import Darwin
    private typealias SpawnActions = posix_spawn_file_actions_t?
    private typealias SpawnAttributes = posix_spawnattr_t?
    private func noActions() -> SpawnActions { nil }
    private func noAttributes() -> SpawnAttributes { nil }
#endif

/// A program the tests start, spawned directly with `posix_spawn`.
///
/// Not Foundation's `Process`: on Linux its `run()` reads `/proc/self/fd` by copying each
/// directory entry's full 256-byte name, which reads past the end of the directory buffer once
/// the test process holds more than about 1,360 descriptors (seen here in CI: a segmentation
/// fault in `memmove` inside `Process.run()`). Here the child gets exactly its three standard
/// streams (every other descriptor is closed in it), an empty signal mask and default signal
/// actions (so SIGTERM ends nginx and Chromium starts), and its exit is collected by one thread
/// that waits for it.
public final class ChildProcess: @unchecked Sendable {
    // @unchecked: `exit` is only read and written under `ended`.

    /// Where one of the child's standard streams goes.
    public enum Stream {
        /// `/dev/null`.
        case null
        /// A pipe; the parent's end is in ``standardInput``, ``standardOutput`` or ``standardError``.
        case pipe
        /// An open file (its descriptor is duplicated into the child).
        case file(FileHandle)
    }

    public let processIdentifier: pid_t
    /// The writing end of the child's standard input, when it is ``Stream/pipe``.
    public let standardInput: FileHandle?
    /// The reading end of the child's standard output, when it is ``Stream/pipe``.
    public let standardOutput: FileHandle?
    /// The reading end of the child's standard error, when it is ``Stream/pipe``.
    public let standardError: FileHandle?

    private let ended = NSCondition()
    private var exit: Int32?

    /// Starts `executable` (a path) with `arguments`. `environment` replaces the inherited one
    /// when given.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        standardInput input: Stream = .null, standardOutput output: Stream = .null,
        standardError error: Stream = .null
    ) throws {
        var actions = noActions()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [FileHandle?] = []
        var childEnds: [Int32] = []
        defer { for descriptor in childEnds { close(descriptor) } }
        for (target, stream) in [(STDIN_FILENO, input), (STDOUT_FILENO, output), (STDERR_FILENO, error)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_RDWR, 0)
                parentEnds.append(nil)
            case .file(let handle):
                posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
                parentEnds.append(nil)
            case .pipe:
                var ends: [Int32] = [0, 0]
                guard pipe(&ends) == 0 else { throw SpawnFailure(executable, errno, "pipe") }
                for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                let (parent, child) = target == STDIN_FILENO ? (ends[1], ends[0]) : (ends[0], ends[1])
                childEnds.append(child)
                posix_spawn_file_actions_adddup2(&actions, child, target)
                parentEnds.append(FileHandle(fileDescriptor: parent, closeOnDealloc: true))
            }
        }
        var attributes = noAttributes()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        let flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP)
        try Self.closeTheRest(&actions, &attributes, flags: flags, executable)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let variables = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { variables.forEach { free($0) } }
        var pid = pid_t()
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, variables)
        guard result == 0 else { throw SpawnFailure(executable, result, "posix_spawn") }
        processIdentifier = pid
        standardInput = parentEnds[0]
        standardOutput = parentEnds[1]
        standardError = parentEnds[2]
        let child = pid
        Thread.detachNewThread { [self] in
            var status: Int32 = 0
            while waitpid(child, &status, 0) == -1 && errno == EINTR {}
            ended.withLock {
                exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : status & 0x7f
                ended.broadcast()
            }
        }
    }

    /// Sets `flags` and closes every descriptor above the standard three in the child: on Linux
    /// with glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; its headers show it
    /// only to GNU sources, hence looked up by name), on Apple platforms with
    /// `POSIX_SPAWN_CLOEXEC_DEFAULT`.
    private static func closeTheRest(
        _ actions: inout SpawnActions, _ attributes: inout SpawnAttributes, flags: Int32,
        _ executable: String
    ) throws {
        #if canImport(Glibc)
            typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
                throw SpawnFailure(executable, ENOSYS, "posix_spawn_file_actions_addclosefrom_np (glibc 2.34 or later)")
            }
            let result = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
            guard result == 0 else { throw SpawnFailure(executable, result, "posix_spawn_file_actions_addclosefrom_np") }
            posix_spawnattr_setflags(&attributes, Int16(flags))
        #else
            posix_spawnattr_setflags(&attributes, Int16(flags | POSIX_SPAWN_CLOEXEC_DEFAULT))
        #endif
    }

    /// Whether the child has not been seen to end yet.
    public var isRunning: Bool { ended.withLock { exit == nil } }

    /// Sends SIGTERM.
    public func terminate() { send(SIGTERM) }

    /// Sends `signal` unless the child has already been collected (its id may belong to another
    /// process by then).
    public func send(_ signal: Int32) {
        ended.withLock { if exit == nil { kill(processIdentifier, signal) } }
    }

    /// Waits for the child to end; returns its exit code, or the number of the signal that ended it.
    @discardableResult
    public func waitForExit() -> Int32 {
        ended.withLock {
            while true {
                if let exit { return exit }
                ended.wait()
            }
        }
    }
}

/// A program that could not be started: which one, and the system's reason.
public struct SpawnFailure: Error, CustomStringConvertible {
    public let description: String
    init(_ executable: String, _ code: Int32, _ call: String) {
        description = "could not start \(executable): \(call) failed: \(String(cString: strerror(code)))"
    }
}
