import Foundation
import ModelDepotShared
import NIOCore

/// Moves a one-server deployment (SQLite and files under a storage directory) into the
/// replicated shape (PostgreSQL and an S3 store): every blob is hashed again on its way into the
/// store, then the whole catalog, the online manifest keys and the identifier secret are written
/// in one transaction.
/// The source is only read.
public enum DeploymentMigration {
    /// - Throws: ``DepotError``: `not_found` for a directory without a catalog, `conflict` for a
    ///   target database that is not empty or a store holding blobs this catalog does not name,
    ///   `digest_mismatch` for a blob changed on disk (nothing is written to the database then).
    public static func run(
        storage: String, database: PostgresLocation, blobs location: S3Location,
        progress: (String) -> Void = { _ in }
    ) async throws -> MigrationReport {
        guard FileManager.default.fileExists(atPath: storage + "/depot.sqlite") else {
            throw DepotError(
                .notFound, "'\(storage)' holds no ModelDepot storage (no depot.sqlite). Give the directory 'depot serve --storage' uses.")
        }
        let source = try SQLiteModelCatalog(path: storage + "/depot.sqlite")
        let files = try FileSystemBlobStore(root: storage, cleaningTemporaryFiles: false)
        let keyFiles = SigningKeyFiles(storage: storage)
        let keys = FileManager.default.fileExists(atPath: keyFiles.directory + "/signing.json") ? try keyFiles.load() : nil
        let target = try await PostgresModelCatalog.connect(database)
        defer { target.close() }
        if let contents = try await target.contentsSummary() {
            throw DepotError(
                .conflict,
                "The target database \(database) already holds \(contents); depot migrate only fills an empty one. Nothing was changed.")
        }
        let store = try await S3BlobStore.connect(location)
        let snapshot = try await source.snapshot()
        let digests = Set(snapshot.versions.flatMap { [$0.sha256] + $0.files.map(\.sha256) } + snapshot.patches.compactMap(\.sha256))
        let foreign = Set(try await store.storedDigests()).subtracting(digests)
        guard foreign.isEmpty else {
            throw DepotError(
                .conflict,
                "The target store \(location) already holds \(foreign.count) blob(s) this catalog does not name; depot migrate only fills an empty one (or one a migration of this catalog began). Nothing was changed."
            )
        }
        var bytes = 0
        for (index, digest) in digests.sorted().enumerated() {
            progress("blob \(index + 1) of \(digests.count): \(digest)")
            bytes += try await copy(digest, from: files, to: store, storage: storage)
        }
        progress("catalog: \(snapshot.models.count) model(s), \(snapshot.versions.count) version(s), \(snapshot.keys.count) key(s)")
        try await target.importSnapshot(
            snapshot, active: keys?.active, pending: keys?.pending, identifierSecret: keyFiles.storedIdentifierSecret())
        return MigrationReport(
            models: snapshot.models.count, versions: snapshot.versions.count, keys: snapshot.keys.count,
            blobs: digests.count, bytes: bytes)
    }

    /// Streams one blob file into the store, 4 MiB at a time, and checks its digest.
    /// - Returns: Its size.
    private static func copy(_ digest: String, from files: FileSystemBlobStore, to store: S3BlobStore, storage: String) async throws -> Int
    {
        let path = files.location(of: digest)
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw DepotError(
                .notFound,
                "Blob \(digest) is missing from '\(storage)' ('\(path)'). Nothing was migrated into the database; restore it from a backup ('depot fsck' lists damaged blobs), then run depot migrate again."
            )
        }
        defer { try? handle.close() }
        let upload = try store.beginUpload()
        var size = 0
        do {
            while let chunk = try handle.read(upToCount: 4 << 20), !chunk.isEmpty {
                size += chunk.count
                try await upload.write(ByteBuffer(bytes: chunk))
            }
            let computed = try await upload.finish()
            guard computed == digest else {
                throw DepotError(
                    .digestMismatch,
                    "Blob \(digest) in '\(storage)' hashes to \(computed): it was changed on disk. Nothing was migrated into the database; restore it from a backup ('depot fsck' lists damaged blobs), then run depot migrate again."
                )
            }
            try await upload.commit(sha256: digest)
        } catch {
            await upload.discard()
            throw error
        }
        return size
    }
}
