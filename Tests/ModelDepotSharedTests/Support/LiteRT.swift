import Foundation
import TestSupport
import Testing

/// The real LiteRT runtime (`ai-edge-litert==2.3.0`), driven through the project's Python scripts.
enum LiteRT {
    /// Whether the runtime is installed, checked once; `scripts/test` installs it. Tests that need
    /// it fail without it, never skip.
    static let availability = Task { (try? await Program.python("litert_check.py", []).status) == 0 }

    /// What LiteRT's interpreter reports for a file (`scripts/tflite/litert_describe.py`).
    struct Description: Decodable {
        struct Tensor: Decodable {
            struct Quantization: Decodable {
                let scales: [Float]
                let zeroPoints: [Int]
                let quantizedDimension: Int
            }

            let index: Int
            let name: String
            let type: String
            let shape: [Int]
            let shapeSignature: [Int]
            let quantization: Quantization
        }

        struct Signature: Decodable {
            let key: String
            let inputs: [String]
            let outputs: [String]
            let inputTensors: [String: Int]
            let outputTensors: [String: Int]
        }

        let inputs: [Tensor]
        let outputs: [Tensor]
        let signatures: [Signature]
    }

    static func describe(_ file: URL) async throws -> Description {
        guard await availability.value else {
            throw DescribeFailure(
                file: file.lastPathComponent,
                message: "LiteRT (ai-edge-litert==2.3.0) is not installed: run scripts/bootstrap to install it")
        }
        let output = try await Program.python("litert_describe.py", [file.path])
        guard output.status == 0 else {
            throw DescribeFailure(file: file.lastPathComponent, message: output.error)
        }
        return try JSONDecoder().decode(Description.self, from: output.output)
    }

    struct DescribeFailure: Error, CustomStringConvertible {
        let file: String
        let message: String
        var description: String { "LiteRT rejected \(file): \(message)" }
    }

    /// One file's outcome in LiteRT's C loader (`scripts/tflite/litert_load.py`).
    struct LoadOutcome: Decodable {
        let file: String
        let outcome: String
        let signal: String?
    }

    /// Loads every `.tflite` file in a directory with the C API, each in a child process.
    static func load(directory: URL) async throws -> [LoadOutcome] {
        guard await availability.value else {
            throw DescribeFailure(
                file: directory.lastPathComponent,
                message: "LiteRT (ai-edge-litert==2.3.0) is not installed: run scripts/bootstrap to install it")
        }
        let output = try await Program.python("litert_load.py", [directory.path, "--timeout", "10"])
        return try JSONDecoder().decode([LoadOutcome].self, from: output.output)
    }
}
