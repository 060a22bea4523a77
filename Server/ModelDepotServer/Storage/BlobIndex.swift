import Logging
import ModelDepotShared
import Synchronization

/// Every blob some version references, in memory: its file, its size and the models whose
/// versions name it. A blob request is planned from it without the catalog or a `stat` (so the
/// hot path does not wait on the disk before it opens the file), and a key limited to some
/// models finds only their blobs. Loaded at start and again after every change to versions.
final class BlobIndex: Sendable {
    struct Entry: Sendable {
        /// The file, or `nil` when the catalog references a blob that is not in storage.
        let path: String?
        let size: Int
        let models: Set<String>
    }

    private let catalog: any ModelCatalog
    private let blobs: any BlobStore
    /// The entries, and the number of the load that made them (a slower, older load never
    /// replaces a newer one).
    private let state = Mutex<(entries: [String: Entry], load: Int)>(([:], 0))
    private let loads = Atomic<Int>(0)

    init(catalog: any ModelCatalog, blobs: any BlobStore) {
        self.catalog = catalog
        self.blobs = blobs
    }

    /// Reads every reference from the catalog; call after anything that adds or removes versions.
    func reload() async throws {
        let load = loads.add(1, ordering: .relaxed).newValue
        var entries: [String: Entry] = [:]
        for reference in try await catalog.blobReferences() {
            entries[reference.sha256] = Entry(path: blobs.path(of: reference.sha256), size: reference.size,
                                              models: Set(reference.models.map(\.rawValue)))
        }
        state.withLock { state in
            if load > state.load { state = (entries, load) }
        }
    }

    /// Removes the files of blobs no version references any more (after the change that
    /// unreferenced them was committed), then reloads. A file that cannot be removed is logged
    /// and left to the next start's clean-up: the change itself stands.
    func removeUnreferenced(_ digests: Set<String>, logger: Logger) async throws {
        for digest in digests.sorted() {
            do {
                try blobs.remove(digest)
            } catch {
                logger.error("could not remove a blob no version references; the next start removes it",
                             metadata: ["sha256": "\(digest)", "cause": "\(error.message)"])
            }
        }
        try await reload()
    }

    /// The entry for a digest, or `nil` when no version references it.
    func entry(_ sha256: Substring) -> Entry? {
        state.withLock { $0.entries[String(sha256)] }
    }

    /// Whether `key` may read the blob: every key when it is not limited to models, otherwise
    /// when a version of one of its models references it.
    static func key(_ key: AccessKey, mayRead entry: Entry) -> Bool {
        guard let allowed = key.models else { return true }
        return allowed.contains { entry.models.contains($0.rawValue) }
    }
}
