import Foundation
import Subprocess

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// Runs programs for tests to completion, capturing what they print. Built on swift-subprocess:
/// the wait is asynchronous, so a test waiting for `depot` or `psql` holds none of the cooperative
/// pool's threads (two on two cores) that the servers and clients it talks to run on.
public enum Program {
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

    /// Runs a program (a path) to completion. `environment` replaces the inherited variables it
    /// names (`nil` values remove them).
    public static func run(_ executable: URL, _ arguments: [String], environment: [String: String?] = [:]) async throws -> Output {
        try await run(.path(FilePath(executable.path)), arguments, environment: environment)
    }

    /// Runs a program (a path, or a name looked up on the PATH) to completion.
    public static func run(_ program: String, _ arguments: [String], environment: [String: String?] = [:]) async throws -> Output {
        try await run(executable(program), arguments, environment: environment)
    }

    private static func run(_ executable: Executable, _ arguments: [String], environment: [String: String?]) async throws -> Output {
        let result = try await Subprocess.run(
            executable, arguments: Arguments(arguments), environment: Self.environment(environment),
            // No limit: a limit is reserved in memory up front, whatever the program prints.
            output: .data(limit: .max), error: .string(limit: .max))
        return Output(status: result.terminationStatus.code, output: result.standardOutput, error: result.standardError)
    }

    /// The inherited environment with `changes` applied (`nil` removes a variable).
    static func environment(_ changes: [String: String?]) -> Environment {
        .inherit.updating(
            Dictionary(uniqueKeysWithValues: changes.compactMap { name, value in Environment.Key(rawValue: name).map { ($0, value) } }))
    }

    /// A program by path (it names a folder) or by name, looked up on the PATH.
    static func executable(_ program: String) -> Executable {
        program.contains("/") ? .path(FilePath(program)) : .name(program)
    }
}

extension TerminationStatus {
    /// The exit code, or the number of the signal that ended the program.
    var code: Int32 {
        switch self {
        case .exited(let code), .signaled(let code): code
        }
    }
}
