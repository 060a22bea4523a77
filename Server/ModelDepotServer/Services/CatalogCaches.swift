import Logging
import ModelDepotShared

/// What the server caches from the catalog, and how a change reaches each part: a change made
/// through this server (the services call ``changed(_:_:)`` once it is committed) and one another
/// replica made (``CatalogChangeFollower``) take the same path.
struct CatalogCaches: Sendable {
    let catalog: any ModelCatalog
    let manifests: ManifestCache
    let keys: AccessKeyCache
    let index: BlobIndex
    let signer: ManifestSigner
    let logger: Logger

    /// A change this server committed.
    func changed(_ kind: CatalogChange.Kind, _ name: String = "") async {
        await apply([CatalogChange(id: 0, kind: kind, name: name)])
    }

    /// Brings each cache in step with committed changes. The blob index first: a manifest
    /// signed once its model's entry is dropped names blobs the index must already know.
    func apply(_ changes: [CatalogChange]) async {
        if changes.contains(where: { $0.kind == .model }) { await reloadIndex() }
        var signingChanged = false
        for change in changes {
            switch change.kind {
            case .model:
                if let name = try? ModelName(change.name) { manifests.invalidate(name) }
            case .keys:
                keys.invalidate()
            case .root, .signing:
                signingChanged = true
            }
        }
        if signingChanged { await reloadSigning() }
    }

    func reloadEverything() async {
        keys.invalidate()
        await reloadSigning()
        manifests.invalidateAll()
        await reloadIndex()
    }

    /// Takes the stored keys and root document; manifests are signed again only when what signs
    /// them changed (not for a new pending key), or when reading failed.
    private func reloadSigning() async {
        do {
            guard try await signer.reload(catalog: catalog) else { return }
        } catch {
            logger.error("could not load the stored manifest keys and root document", metadata: ["cause": "\(error)"])
        }
        manifests.invalidateAll()
    }

    private func reloadIndex() async {
        do {
            try await index.reload()
        } catch {
            logger.error("could not reload the blob index after a change", metadata: ["cause": "\(error)"])
        }
    }
}
