import ArgumentParser
import ModelDepotServer

extension Depot.Serve {
    /// `--patch-from`, `--patch-max-size`, `--patch-interval` and their variables.
    func resolvePatches(_ environment: [String: String], into configuration: inout ServerConfiguration) throws {
        if let sources = try patchFrom ?? environment["DEPOT_PATCH_FROM"].map({ try number($0, "DEPOT_PATCH_FROM") }) {
            guard (0...16).contains(sources) else {
                throw ValidationError(
                    "The number of versions to patch from (--patch-from, DEPOT_PATCH_FROM) must be 0 to 16, not \(sources).")
            }
            configuration.patchSources = sources
        }
        if let size = try patchMaxSize ?? environment["DEPOT_PATCH_MAX_SIZE"].map({ try number($0, "DEPOT_PATCH_MAX_SIZE") }) {
            guard (0...(1 << 30)).contains(size) else {
                throw ValidationError(
                    "The largest file that gets patches (--patch-max-size, DEPOT_PATCH_MAX_SIZE) must be 0 to 1073741824 bytes, not \(size)."
                )
            }
            configuration.patchMaximumSize = size
        }
        if let seconds = try patchInterval ?? environment["DEPOT_PATCH_INTERVAL"].map({ try number($0, "DEPOT_PATCH_INTERVAL") }) {
            guard (10...86_400).contains(seconds) else {
                throw ValidationError(
                    "The patch interval (--patch-interval, DEPOT_PATCH_INTERVAL) must be 10 to 86400 seconds, not \(seconds).")
            }
            configuration.patchInterval = .seconds(seconds)
        }
    }
}
