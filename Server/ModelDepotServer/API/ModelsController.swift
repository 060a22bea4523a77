import Foundation
import Hummingbird
import ModelDepotShared

/// `/v1/admin/models`: create, list, show, delete models.
struct ModelsController {
    let catalog: any ModelCatalog
    let service: ModelService

    func register(in group: RouterGroup<AppRequestContext>) {
        group.post("models", use: create)
        group.get("models", use: list)
        group.get("models/:name", use: show)
        group.delete("models/:name", use: delete)
    }

    func create(_ request: Request, context: AppRequestContext) async throws -> Response {
        let creation = try await request.decodeJSON(ModelCreation.self, context: context)
        return try JSONResponse.make(try await service.create(creation), status: .created)
    }

    func list(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(ModelList(models: try await catalog.models()))
    }

    func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(try await catalog.model(try context.modelName()))
    }

    func delete(_ request: Request, context: AppRequestContext) async throws -> Response {
        try await service.delete(try context.modelName(), force: request.uri.queryParameters.get("force") == "true", logger: context.logger)
        return Response(status: .noContent)
    }
}
