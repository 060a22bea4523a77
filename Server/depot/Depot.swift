import ArgumentParser
import Foundation
import ModelDepotShared

/// `depot`: the ModelDepot command line.
@main
struct Depot: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "depot",
        abstract: "ModelDepot: host, verify and roll out TensorFlow Lite models.",
        discussion: """
            Examples:
              depot serve --storage /var/lib/modeldepot
              depot upload flowers flowers.tflite --file labels=labels.txt --publish
              depot rollout set flowers --split 7=90,8=10

            Exit status: 0 success, 1 usage error or rejected input, 2 server or network failure.
            """,
        version: modelDepotVersion,
        subcommands: [
            Serve.self, Login.self, Models.self, Upload.self, Versions.self, Publish.self, Unpublish.self,
            DeleteVersion.self, Rollouts.self, Stats.self, Experiment.self, Keys.self, Inspect.self, Diff.self, Fsck.self, Gc.self,
            Migrate.self, Import.self,
        ]
    )

    /// Runs a command; maps failures to the documented exit codes (ArgumentParser's usage
    /// errors to 1 instead of 64). Commands check their options at the start of `run()`, not in
    /// `validate()`: ArgumentParser validates before it reports an unknown option, so a
    /// mistyped flag would be answered with another complaint.
    static func main() async {
        let command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exit(for: error, usage: nil)
        }
        do {
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var command = command
                try command.run()
            }
        } catch {
            exit(for: error, usage: type(of: command))
        }
    }

    /// Prints `error` (with `usage`'s usage when it is a usage error thrown while running a
    /// subcommand; ArgumentParser's own message for parse errors) and exits with its code.
    private static func exit(for error: any Error, usage command: (any ParsableCommand.Type)?) -> Never {
        if let error = error as? DepotError {
            printError(error.cause.map { "\(error.message) (\($0))" } ?? error.message)
            Foundation.exit(error.exitCode)
        }
        let code = exitCode(for: error)
        var message = fullMessage(for: error)
        if let command, code == .validationFailure, ObjectIdentifier(command) != ObjectIdentifier(Depot.self) {
            let usage = usageString(for: command)
            let path = usage.prefix { $0 != "[" && $0 != "<" }.trimmingCharacters(in: .whitespaces)
            message = "Error: \(Self.message(for: error))\nUsage: \(usage)\n  See '\(path) --help' for more information."
        }
        if code == .success {
            print(message)
        } else if !message.isEmpty {
            FileHandle.standardError.write(Data((message + "\n").utf8))
        }
        Foundation.exit(code == .validationFailure ? 1 : code.rawValue)
    }
}

extension DepotError {
    /// 2 for server or network failures, 1 for everything the user can fix.
    var exitCode: Int32 {
        [.unavailable, .internalError, .insufficientStorage].contains(code) ? 2 : 1
    }
}

/// Writes `error: message` to standard error, escaped: messages name files and values that came
/// from models and servers (``TerminalText``).
func printError(_ message: String) {
    FileHandle.standardError.write(Data("error: \(TerminalText.escaped(message))\n".utf8))
}
