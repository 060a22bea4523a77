import ArgumentParser
import Foundation
import ModelDepotShared

extension Depot {
    /// `depot inspect FILE [--json]`: what a `.tflite` file holds and whether it is valid.
    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a .tflite file's inputs, outputs, signatures, operators and metadata, and verify it.",
            discussion: "Exits 0 for a valid model, 1 for an invalid or unreadable file."
        )

        @Argument(help: "The .tflite file to inspect.")
        var file: String

        @Flag(help: "Print JSON (sha256, size, subgraphs, signatures, operators, metadata, valid, error).")
        var json = false

        @Flag(help: "Accept builtin operators only: reject custom and Flex operators and sparse tensors.")
        var builtinOnly = false

        func run() throws {
            let inspection: TFLiteInspection
            do {
                inspection = try TFLiteInspection(fileAt: file, policy: builtinOnly ? .builtinOperatorsOnly : .default)
            } catch {
                printError(error.message)
                throw ExitCode(1)
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(inspection), as: UTF8.self))
            } else {
                print(InspectionText(inspection: inspection, file: file).rendered)
            }
            if case .failure(let error) = inspection.result {
                if !json { printError("\(file) is not a valid TFLite model: \(error.message)") }
                throw ExitCode(1)
            }
        }
    }
}

/// Writes `error: message` to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
}
