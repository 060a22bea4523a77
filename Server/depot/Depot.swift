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
        subcommands: [Serve.self, Login.self, Models.self, Upload.self, Versions.self, Publish.self, Unpublish.self,
                      DeleteVersion.self, Rollouts.self, Stats.self, Experiment.self, Keys.self, Inspect.self, Diff.self, Fsck.self, Gc.self,
                      Migrate.self, Import.self]
    )

    /// Runs a command; maps failures to the documented exit codes (ArgumentParser's usage
    /// errors to 1 instead of 64).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as DepotError {
            printError(error.cause.map { "\(error.message) (\($0))" } ?? error.message)
            Foundation.exit(error.exitCode)
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                print(message)
            } else if !message.isEmpty {
                FileHandle.standardError.write(Data((message + "\n").utf8))
            }
            Foundation.exit(code == .validationFailure ? 1 : code.rawValue)
        }
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
