import Foundation
import TestSupport

extension Program {
    /// Runs one of the project's `scripts/tflite` Python scripts.
    static func python(_ script: String, _ arguments: [String]) async throws -> Output {
        try await run("python3", [Repository.tfliteScripts.appendingPathComponent(script).path] + arguments)
    }
}
