import Foundation

/// Where a downloader keeps its files: models and partial downloads in the cache directory; the
/// installation id, the trust state and the outcome queue in the state directory, which is never
/// in space the system purges. A purge of Caches that took the trust state with it would reset
/// rollback protection, and one that took the installation id would move the device to another
/// bucket of every rollout.
struct StorageLocations: Sendable, Hashable {
    /// Models (`models/`) and partial downloads (`partial/`).
    var cache: URL
    /// `installation-id`, `trust/`, `outcomes.json`.
    var state: URL

    /// What the state directory holds, by name: moved there from the cache directory when an
    /// earlier SDK kept them beside the models.
    static let stateEntries = ["installation-id", "trust", "outcomes.json"]

    /// The locations for a cache directory. With no state directory given, the state stays in the
    /// cache directory, unless that lies inside one of the `purgeable` folders (Caches): then it goes
    /// to `durable`, under the cache's path relative to that folder (relative, because an app's
    /// container moves when the app is updated).
    static func resolve(cache: URL, state: URL?, purgeable: [URL], durable: URL) -> StorageLocations {
        if let state { return StorageLocations(cache: cache, state: state) }
        let path = cache.standardizedFileURL.pathComponents
        for root in purgeable {
            let prefix = root.standardizedFileURL.pathComponents
            guard path.count >= prefix.count, Array(path.prefix(prefix.count)) == prefix else { continue }
            let relative = path.dropFirst(prefix.count)
            let folder = relative.reduce(durable.appendingPathComponent("state")) { $0.appendingPathComponent($1) }
            return StorageLocations(cache: cache, state: relative.isEmpty ? durable.appendingPathComponent("state") : folder)
        }
        return StorageLocations(cache: cache, state: cache)
    }

    /// Folders the system may empty when space runs low: Caches on Apple platforms, the XDG cache
    /// folder elsewhere.
    static func systemPurgeableFolders() -> [URL] {
        #if canImport(Darwin)
            FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask)
        #else
            [xdgFolder("XDG_CACHE_HOME", default: ".cache")]
        #endif
    }

    /// Where the SDK's files live unless the app says otherwise: Application Support/ModelDepot on
    /// Apple platforms, the XDG data folder's ModelDepot elsewhere.
    static func systemDurableFolder() -> URL {
        #if canImport(Darwin)
            let support =
                FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
                ?? FileManager.default.temporaryDirectory
            #if os(macOS)
                // Outside iOS's containers, Application Support is shared by every app of the user.
                if let bundle = Bundle.main.bundleIdentifier {
                    return support.appendingPathComponent(bundle).appendingPathComponent("ModelDepot")
                }
            #endif
            return support.appendingPathComponent("ModelDepot")
        #else
            return xdgFolder("XDG_DATA_HOME", default: ".local/share").appendingPathComponent("ModelDepot")
        #endif
    }

    private static func xdgFolder(_ variable: String, default relative: String) -> URL {
        if let value = ProcessInfo.processInfo.environment[variable], value.hasPrefix("/") { return URL(fileURLWithPath: value) }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(relative)
    }

    /// Creates both folders (excluded from backup, readable after the first unlock) and moves
    /// state that an earlier SDK kept in the cache directory into the state directory, unless the
    /// state directory has it already.
    func prepare() throws {
        try StoredFile.prepareDirectory(cache.appendingPathComponent("models"))
        try StoredFile.prepareDirectory(cache.appendingPathComponent("partial"))
        try StoredFile.prepareDirectory(state)
        guard cache.standardizedFileURL != state.standardizedFileURL else { return }
        let manager = FileManager.default
        for name in Self.stateEntries {
            let old = cache.appendingPathComponent(name), new = state.appendingPathComponent(name)
            if manager.fileExists(atPath: old.path), !manager.fileExists(atPath: new.path) { try manager.moveItem(at: old, to: new) }
        }
    }
}
