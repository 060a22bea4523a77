import Foundation
import ModelDepotShared

/// Makes the pending manifest key and publishes root documents. The signer takes what was
/// stored through ``CatalogCaches``, as it takes another replica's change.
struct SigningService {
    let catalog: any ModelCatalog
    let signer: ManifestSigner
    let caches: CatalogCaches
    let clock: @Sendable () -> Date

    /// Makes the key for the next rotation (or returns the one made before).
    func makePendingKey() async throws -> PublicSigningKey {
        let key = try await signer.makePendingKey()
        await caches.changed(.signing)
        return key
    }

    /// Checks and stores root document N+1 (or the first); manifests are signed from then on with
    /// the manifest key it lists.
    func publishRoot(_ envelope: Data) async throws -> RootDocument {
        let document = try await signer.accept(envelope, catalog: catalog, now: clock())
        await caches.changed(.root)
        return document
    }
}
