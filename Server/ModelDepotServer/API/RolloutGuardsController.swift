import Foundation
import Hummingbird
import ModelDepotRollouts
import ModelDepotShared

/// `/v1/admin/models/{name}/rollout/guards`: guarded rollouts, started, resumed, stopped and
/// reviewed on request.
struct RolloutGuardsController {
    let service: RolloutGuardService

    func register(in group: RouterGroup<AppRequestContext>) {
        group.get("models/:name/rollout/guards", use: list)
        group.post("models/:name/rollout/guards/review", use: review)
        group.put("models/:name/rollout/guards/:rule", use: start)
        group.post("models/:name/rollout/guards/:rule/resume", use: resume)
        group.delete("models/:name/rollout/guards/:rule", use: stop)
    }

    func list(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(RolloutGuards(guards: try await service.guards(of: try context.modelName())))
    }

    func review(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(RolloutGuards(guards: try await service.review(try context.modelName())))
    }

    func start(_ request: Request, context: AppRequestContext) async throws -> Response {
        let name = try context.modelName()
        let rule = try RolloutEdits.ruleName(context.parameters.get("rule") ?? "")
        let body = try await request.decodeJSON(RolloutGuardStart.self, context: context)
        let started = try await service.start(body, of: name, rule: rule, by: try context.requirePrincipal().id)
        return try JSONResponse.make(started, status: .created)
    }

    func resume(_ request: Request, context: AppRequestContext) async throws -> Response {
        let rule = try RolloutEdits.ruleName(context.parameters.get("rule") ?? "")
        return try JSONResponse.make(
            try await service.resume(of: try context.modelName(), rule: rule, by: try context.requirePrincipal().id))
    }

    func stop(_ request: Request, context: AppRequestContext) async throws -> Response {
        let rule = try RolloutEdits.ruleName(context.parameters.get("rule") ?? "")
        return try JSONResponse.make(try await service.stop(of: try context.modelName(), rule: rule, by: try context.requirePrincipal().id))
    }
}
