import ArgumentParser
import Foundation
import ModelDepotServer
import ModelDepotShared

extension Depot.Serve {
    /// The trusted proxies, the public URL and the console sessions' lifetimes.
    func resolveClients(_ environment: [String: String], into configuration: inout ServerConfiguration) throws {
        let proxies =
            trustedProxy.isEmpty
            ? (environment["DEPOT_TRUSTED_PROXIES"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            : trustedProxy
        do {
            configuration.trustedProxies = try proxies.filter { !$0.isEmpty }.map(AddressRange.init)
        } catch let error as DepotError {
            throw ValidationError("--trusted-proxy (DEPOT_TRUSTED_PROXIES): \(error.message)")
        }
        if let url = publicURL ?? environment["DEPOT_PUBLIC_URL"] {
            guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), ["http", "https"].contains(scheme),
                parsed.host != nil
            else {
                throw ValidationError(
                    "--public-url (DEPOT_PUBLIC_URL) '\(url)' is not an http or https URL; write one like https://models.example.com.")
            }
            configuration.publicURL = parsed
        }
        let lifetimes: [(Int?, String, WritableKeyPath<ServerConfiguration, TimeInterval>)] = [
            (consoleIdleTimeout, "DEPOT_CONSOLE_IDLE_TIMEOUT", \.consoleIdleTimeout),
            (consoleSessionLifetime, "DEPOT_CONSOLE_SESSION_LIFETIME", \.consoleSessionLifetime),
        ]
        for (flag, variable, path) in lifetimes {
            guard let text = flag.map(String.init) ?? environment[variable] else { continue }
            guard let seconds = Int(text), (60...2_592_000).contains(seconds) else {
                throw ValidationError(
                    "\(variable) (--\(variable.dropFirst(6).lowercased().replacingOccurrences(of: "_", with: "-"))) must be 60 to 2592000 seconds (30 days), not '\(text)'."
                )
            }
            configuration[keyPath: path] = TimeInterval(seconds)
        }
    }
}
