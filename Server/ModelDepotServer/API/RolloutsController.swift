import Foundation
import Hummingbird
import ModelDepotRollouts
import ModelDepotShared

/// `/v1/admin/models/{name}/rollout`: the default, rules, pins and the audit log.
/// Every change is checked before it is stored; a rejected one leaves the rollout as it was.
struct RolloutsController {
    let catalog: any ModelCatalog
    let service: RolloutService

    func register(in group: RouterGroup<AppRequestContext>) {
        group.get("models/:name/rollout", use: show)
        group.get("models/:name/rollout/history", use: history)
        group.put("models/:name/rollout/default", use: setDefault)
        group.put("models/:name/rollout/rules/:rule", use: setRule)
        group.delete("models/:name/rollout/rules/:rule", use: removeRule)
        group.put("models/:name/rollout/pins/:installationID", use: pin)
        group.delete("models/:name/rollout/pins/:installationID", use: unpin)
    }

    func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(try await catalog.rollout(of: try context.modelName()))
    }

    func history(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(RolloutHistory(changes: try await catalog.rolloutHistory(of: try context.modelName())))
    }

    func setDefault(_ request: Request, context: AppRequestContext) async throws -> Response {
        let choice = try await request.decodeJSON(RolloutVersionChoice.self, context: context)
        return try await change(context) { RolloutEdits.settingDefault(choice.version, in: $0) }
    }

    func setRule(_ request: Request, context: AppRequestContext) async throws -> Response {
        let name = try RolloutEdits.ruleName(context.parameters.get("rule") ?? "")
        let body = try await request.decodeJSON(RolloutRuleChange.self, context: context)
        let conditions = try body.conditions.map { text throws(DepotError) in try RolloutCondition(parsing: text) }
        let shares = body.shares.map { ($0.version, $0.basisPoints) }
        let identity = RolloutEdits.freshRuleIdentity()
        return try await change(context, naming: shares.map(\.0), allowsShadowed: body.allowShadowed ?? false) {
            try RolloutEdits.settingRule(name, conditions: conditions, shares: shares, newIdentity: identity, in: $0)
        }
    }

    func removeRule(_ request: Request, context: AppRequestContext) async throws -> Response {
        let name = try RolloutEdits.ruleName(context.parameters.get("rule") ?? "")
        return try await change(context) { try RolloutEdits.removingRule(named: name, from: $0) }
    }

    func pin(_ request: Request, context: AppRequestContext) async throws -> Response {
        let installationID = try RolloutEdits.installationID(context.parameters.get("installationID") ?? "")
        let choice = try await request.decodeJSON(RolloutVersionChoice.self, context: context)
        guard let version = choice.version else {
            throw DepotError(.badRequest, "A pin needs a version; to remove a pin, unpin the device.")
        }
        return try await change(context) { RolloutEdits.pinning(installationID, to: version, in: $0) }
    }

    func unpin(_ request: Request, context: AppRequestContext) async throws -> Response {
        let installationID = try RolloutEdits.installationID(context.parameters.get("installationID") ?? "")
        return try await change(context) { try RolloutEdits.unpinning(installationID, in: $0) }
    }

    private func change(
        _ context: AppRequestContext, naming: [Int] = [], allowsShadowed: Bool = false,
        _ body: @escaping @Sendable (Rollout) throws -> Rollout
    ) async throws -> Response {
        let rollout = try await service.change(
            try context.modelName(), by: try context.requirePrincipal().id, naming: naming,
            allowsShadowed: allowsShadowed, body)
        return try JSONResponse.make(rollout)
    }
}
