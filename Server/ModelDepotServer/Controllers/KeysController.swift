import Foundation
import Hummingbird
import ModelDepotShared

/// `/v1/admin/keys`: admin tokens and read-only app keys.
struct KeysController {
    let catalog: any ModelCatalog
    let keys: AccessKeyCache
    let sessions: ConsoleSessions
    let clock: @Sendable () -> Date

    func register(in group: RouterGroup<AppRequestContext>) {
        group.post("keys", use: create)
        group.get("keys", use: list)
        group.delete("keys/:id", use: revoke)
    }

    func create(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(try await create(try await request.decodeJSON(AccessKeyCreation.self, context: context)), status: .created)
    }

    /// Issues a key (its secret returned this once): for the API and the console alike.
    func create(_ creation: AccessKeyCreation) async throws -> CreatedAccessKey {
        if creation.kind == .admin, creation.models != nil {
            throw DepotError(.badRequest, "Admin tokens cannot be limited to models; leave out 'models', or create an app key.")
        }
        let created = try await KeyIssuer(catalog: catalog).issue(kind: creation.kind, name: creation.name ?? "",
                                                                   models: creation.models, at: clock())
        keys.invalidate()
        return created
    }

    func list(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(AccessKeyList(keys: try await catalog.keys()))
    }

    func revoke(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(try await revoke(id: context.parameters.get("id") ?? ""))
    }

    /// Revokes a key (never the last admin token) and ends its console sessions: for the API and
    /// the console alike.
    func revoke(id: String) async throws -> AccessKey {
        let key = try await catalog.revokeKey(id: id, at: clock())
        keys.invalidate()
        try await sessions.endAll(ofKey: id)
        return key
    }
}

/// Creates keys: a random secret, its hash stored, the secret returned once.
struct KeyIssuer {
    let catalog: any ModelCatalog

    func issue(kind: AccessKey.Kind, name: String, models: [ModelName]?, at date: Date,
               secret: AccessKeySecret = .generate()) async throws -> CreatedAccessKey {
        let id = secret.newKeyID()
        if try await catalog.key(id: id) != nil { throw CatalogRule.keyExists(id) }
        let key = AccessKey(id: id, kind: kind, name: name, models: models, createdAt: date, revokedAt: nil)
        try await catalog.createKey(key, secretHash: secret.hash)
        return CreatedAccessKey(key: key, secret: secret.text)
    }
}
