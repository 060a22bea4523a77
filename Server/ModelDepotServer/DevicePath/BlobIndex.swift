import Logging
import ModelDepotShared
import Synchronization

#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

/// What tells a file changed without reading it: its size, inode and modification time.
struct FileIdentity: Equatable, Sendable {
    let size: Int
    let inode: UInt64
    let modifiedSeconds: Int
    let modifiedNanoseconds: Int

    init(_ status: stat) {
        size = Int(status.st_size)
        inode = UInt64(status.st_ino)
        #if canImport(Glibc)
            modifiedSeconds = Int(status.st_mtim.tv_sec)
            modifiedNanoseconds = Int(status.st_mtim.tv_nsec)
        #else
            modifiedSeconds = Int(status.st_mtimespec.tv_sec)
            modifiedNanoseconds = Int(status.st_mtimespec.tv_nsec)
        #endif
    }

    /// The identity of the file at `path`, or `nil` when there is none.
    init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        self.init(status)
    }

    /// The identity of an open file, or `nil`.
    init?(descriptor: CInt) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        self.init(status)
    }
}

/// Every blob some version references, in memory: its file (and that file's identity), its
/// size and the models whose versions name it. A blob request is planned from it without the catalog or a `stat` (so the
/// hot path does not wait on the disk before it opens the file), and a key limited to some
/// models finds only their blobs. Loaded at start and again after every change to versions.
final class BlobIndex: Sendable {
    struct Entry: Sendable {
        /// Where the file is on this machine; `nil` in an object store.
        let path: String?
        let size: Int
        let models: Set<String>
        /// The file as it was when the index was loaded (`nil`: it was missing): a file changed
        /// since (rewritten, replaced, cut) is not served.
        let identity: FileIdentity?
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
            let path = blobs.filePath(of: reference.sha256)
            entries[reference.sha256] = Entry(
                path: path, size: reference.size, models: Set(reference.models.map(\.rawValue)),
                identity: path.flatMap { FileIdentity(path: $0) })
        }
        state.withLock { state in
            if load > state.load { state = (entries, load) }
        }
    }

    /// Records the identity of a blob's file found whole again (its bytes hash to its digest).
    func confirm(_ sha256: String, identity: FileIdentity) {
        state.withLock { state in
            guard let entry = state.entries[sha256] else { return }
            state.entries[sha256] = Entry(path: entry.path, size: entry.size, models: entry.models, identity: identity)
        }
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
