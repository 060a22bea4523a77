import Foundation

/// Paths inside this repository, found from this file's location.
enum Repository {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static let tfliteFixtures = root.appendingPathComponent("Tests/Fixtures/tflite")
    static let tfliteScripts = root.appendingPathComponent("scripts/tflite")

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
