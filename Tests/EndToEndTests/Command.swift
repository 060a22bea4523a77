import Foundation
import TestSupport

/// The real `depot` CLI and curl, as the end-to-end tests run them.
enum Command {
    /// Runs `depot` with only the given server settings: no inherited DEPOT_SERVER/DEPOT_TOKEN,
    /// and a config file that does not exist unless `environment` names another.
    static func depot(_ arguments: [String], environment: [String: String]) async throws -> Program.Output {
        var settings: [String: String?] = [
            "DEPOT_SERVER": nil, "DEPOT_TOKEN": nil,
            "DEPOT_CONFIG": FileManager.default.temporaryDirectory.appendingPathComponent("depot-e2e-no-config.json").path,
        ]
        for (name, value) in environment { settings[name] = value }
        return try await Program.run(Binaries.depot, arguments, environment: settings)
    }

    static func curl(_ arguments: [String]) async throws -> Program.Output {
        try await Program.run("curl", ["-sS"] + arguments)
    }
}
