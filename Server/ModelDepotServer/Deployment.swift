import Foundation
import Logging
import ModelDepotShared

/// What this server runs with, chosen once at start from the configuration: one server on
/// SQLite and files, or a replica on PostgreSQL and an S3 store. Everything after start works
/// through these parts and never asks which backend it has.
struct Deployment: Sendable {
    let catalog: any ModelCatalog
    let blobs: any BlobStore
    /// Where the online manifest keys live.
    let signingKeys: any SigningKeyStore
    /// Keeps the collector from removing a blob an upload is naming.
    let collectionLock: any BlobCollectionLock
    /// Makes one replica at a time review guarded rollouts.
    let guardLock: any ReplicaWorkLock
    /// Makes one replica at a time make patches.
    let patchLock: any ReplicaWorkLock
    /// The changes other replicas make; `nil` when this server is the catalog's only writer.
    let changes: (any CatalogChangeFeed)?

    /// How blob bytes reach devices (file, stream or redirect).
    var delivery: BlobDelivery { blobs.delivery }

    /// Opens the catalog and the blob store the configuration names.
    static func open(_ configuration: ServerConfiguration, logger: Logger) async throws -> Deployment {
        let storage = configuration.storageDirectory
        let files = try FileSystemBlobStore(root: storage)
        let blobs: any BlobStore =
            if let location = configuration.objectStore {
                try await S3BlobStore.connect(location, redirectLifetime: configuration.blobRedirectLifetime, clock: configuration.clock)
            } else {
                files
            }
        if let database = configuration.database {
            let catalog = try await PostgresModelCatalog.connect(try PostgresLocation(url: database), logger: logger)
            return Deployment(
                catalog: catalog, blobs: blobs, signingKeys: catalog,
                collectionLock: PostgresBlobCollectionLock(catalog: catalog),
                guardLock: PostgresReplicaWorkLock(catalog: catalog, key: PostgresReplicaWorkLock.guardReview),
                patchLock: PostgresReplicaWorkLock(catalog: catalog, key: PostgresReplicaWorkLock.patchMaking), changes: catalog)
        }
        return Deployment(
            catalog: try SQLiteModelCatalog(path: storage + "/depot.sqlite"), blobs: blobs,
            signingKeys: SigningKeyFiles(storage: storage), collectionLock: LocalBlobCollectionLock(),
            guardLock: LocalReplicaWorkLock(), patchLock: LocalReplicaWorkLock(), changes: nil)
    }
}
