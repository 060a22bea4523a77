import ArgumentParser
import Foundation
import ModelDepotShared

extension Depot {
    /// `depot inspect FILE [--json]`: what a `.tflite` file holds and whether it is valid.
    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a .tflite file's inputs, outputs, signatures, operators and metadata, and verify it.",
            discussion: """
                Examples:
                  depot inspect flowers.tflite
                  depot inspect flowers.tflite --builtin-only
                  depot inspect flowers.tflite --json

                Exits 0 for a valid model, 1 for an invalid or unreadable file.
                """
        )

        @Argument(help: "The .tflite file to inspect.")
        var file: String

        @Flag(help: "Print JSON (sha256, size, subgraphs, signatures, operators, metadata, valid, error).")
        var json = false

        @Flag(help: "Accept builtin operators only: reject custom and Flex operators and sparse tensors.")
        var builtinOnly = false

        func run() throws {
            let inspection = try TFLiteInspection(fileAt: file, policy: builtinOnly ? .builtinOperatorsOnly : .default)
            if json {
                print(try JSONOutput.string(inspection))
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
