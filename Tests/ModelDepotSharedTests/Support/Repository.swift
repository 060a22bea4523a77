import Foundation

/// Paths inside this repository, found from this file's location.
enum Repository {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static let tfliteFixtures = root.appendingPathComponent("Tests/Fixtures/tflite")
    static let tfliteScripts = root.appendingPathComponent("scripts/tflite")
    static let metadataFixtures = tfliteFixtures.appendingPathComponent("metadata")
    /// Real models with metadata, fetched by scripts/tflite/fetch_real_models (run by scripts/bootstrap).
    static let realModels = root.appendingPathComponent(".build/real-models")
    /// The Python of the virtual environment that holds tflite-support 0.4.4 (scripts/bootstrap).
    static let referencePython = root.appendingPathComponent(".build/tflite-support/bin/python")

    /// The `.tflite` files in a folder, sorted by name.
    static func models(in folder: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "tflite" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    /// Every committed `.tflite` fixture, sorted by name.
    static func fixtures() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: tfliteFixtures, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "tflite" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    static func fixture(_ name: String) -> URL {
        tfliteFixtures.appendingPathComponent(name + ".tflite")
    }

    static func bytes(of url: URL) throws -> [UInt8] {
        Array(try Data(contentsOf: url))
    }

    /// The `depot` executable built next to the running test bundle.
    static var depotExecutable: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("depot")
    }
}
