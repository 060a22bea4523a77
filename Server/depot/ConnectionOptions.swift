import ArgumentParser
import Foundation
import ModelDepotShared

/// `--server` and `--token`, falling back to DEPOT_SERVER / DEPOT_TOKEN, then to the file
/// `depot login` writes.
struct ConnectionOptions: ParsableArguments {
    @Option(help: "The server's URL (default: DEPOT_SERVER, then 'depot login', then http://127.0.0.1:8080).")
    var server: String?

    @Option(help: "The admin token (default: DEPOT_TOKEN, then 'depot login').")
    var token: String?

    func client(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> AdminClient {
        let saved = CLIConfiguration.load(environment: environment)
        let serverText = server ?? environment["DEPOT_SERVER"] ?? saved?.server ?? "http://127.0.0.1:8080"
        guard let url = URL(string: serverText), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw ValidationError("'\(serverText)' is not a server URL; use e.g. http://127.0.0.1:8080.")
        }
        guard let token = token ?? environment["DEPOT_TOKEN"] ?? saved?.token else {
            throw ValidationError("No admin token: pass --token, set DEPOT_TOKEN, or run 'depot login --server URL --token TOKEN'.")
        }
        return AdminClient(server: url, token: token)
    }
}

/// What `depot login` saves: `$DEPOT_CONFIG`, else `$XDG_CONFIG_HOME/modeldepot/config.json`,
/// else `~/.config/modeldepot/config.json` (mode 0600).
struct CLIConfiguration: Codable {
    var server: String
    var token: String

    static func path(environment: [String: String]) -> String {
        if let path = environment["DEPOT_CONFIG"] { return path }
        let base = environment["XDG_CONFIG_HOME"] ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.config")
        return base + "/modeldepot/config.json"
    }

    static func load(environment: [String: String]) -> CLIConfiguration? {
        guard let data = FileManager.default.contents(atPath: path(environment: environment)) else { return nil }
        return try? JSONDecoder().decode(CLIConfiguration.self, from: data)
    }

    func save(environment: [String: String]) throws {
        let path = Self.path(environment: environment)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        guard
            FileManager.default.createFile(
                atPath: path, contents: try JSONEncoder().encode(self),
                attributes: [.posixPermissions: 0o600])
        else {
            throw ValidationError("Could not write '\(path)'; set DEPOT_CONFIG to a writable file.")
        }
    }
}
