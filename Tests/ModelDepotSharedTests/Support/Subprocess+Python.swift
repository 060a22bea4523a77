import Foundation
import TestSupport

extension Subprocess {
    /// Runs one of the project's `scripts/tflite` Python scripts.
    static func python(_ script: String, _ arguments: [String]) throws -> Output {
        try run("python3", [Repository.tfliteScripts.appendingPathComponent(script).path] + arguments)
    }
}
