import Foundation
import Hummingbird
import ModelDepotShared

/// `/v1/admin/keys`: admin tokens and read-only app keys.
struct KeysController {
    let catalog: any ModelCatalog
    let service: KeyService

    func register(in group: RouterGroup<AppRequestContext>) {
        group.post("keys", use: create)
        group.get("keys", use: list)
        group.delete("keys/:id", use: revoke)
    }

    func create(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(
            try await service.create(try await request.decodeJSON(AccessKeyCreation.self, context: context)), status: .created)
    }

    func list(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(AccessKeyList(keys: try await catalog.keys()))
    }

    func revoke(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(try await service.revoke(id: context.parameters.get("id") ?? ""))
    }
}
