import Foundation
import ModelDepotShared

/// Issues and revokes access keys, for the API, the console and the first start alike.
struct KeyService {
    let catalog: any AccessCatalog
    /// `nil` before the server serves (the first admin token is made at start).
    let caches: CatalogCaches?
    let sessions: ConsoleSessions?
    let clock: @Sendable () -> Date

    /// Issues a key (its secret returned this once).
    func create(_ creation: AccessKeyCreation) async throws -> CreatedAccessKey {
        if creation.kind == .admin, creation.models != nil {
            throw DepotError(.badRequest, "Admin tokens cannot be limited to models; leave out 'models', or create an app key.")
        }
        return try await issue(kind: creation.kind, name: creation.name ?? "", models: creation.models)
    }

    /// Makes a key with a random secret (or `secret`); only its hash is stored.
    func issue(kind: AccessKey.Kind, name: String, models: [ModelName]?, secret: AccessKeySecret = .generate()) async throws
        -> CreatedAccessKey
    {
        let id = secret.newKeyID()
        if try await catalog.key(id: id) != nil { throw CatalogRule.keyExists(id) }
        let key = AccessKey(id: id, kind: kind, name: name, models: models, createdAt: clock(), revokedAt: nil)
        try await catalog.createKey(key, secretHash: secret.hash)
        await caches?.changed(.keys)
        return CreatedAccessKey(key: key, secret: secret.text)
    }

    /// Revokes a key (never the last admin token) and ends its console sessions.
    func revoke(id: String) async throws -> AccessKey {
        let key = try await catalog.revokeKey(id: id, at: clock())
        await caches?.changed(.keys)
        try await sessions?.endAll(ofKey: id)
        return key
    }
}
