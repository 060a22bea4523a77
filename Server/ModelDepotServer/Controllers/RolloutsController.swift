import Foundation
import Hummingbird
import ModelDepotShared

/// `/v1/admin/models/{name}/rollout`: the default, rules, pins and the audit log.
/// Every change is checked before it is stored; a rejected one leaves the rollout as it was.
struct RolloutsController {
    let catalog: any ModelCatalog
    let manifests: ManifestCache
    let clock: @Sendable () -> Date

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
        return try await change(context) { rollout in
            var rollout = rollout
            rollout.defaultVersion = choice.version
            return rollout
        }
    }

    func setRule(_ request: Request, context: AppRequestContext) async throws -> Response {
        let name = try ruleName(context)
        let body = try await request.decodeJSON(RolloutRuleChange.self, context: context)
        let conditions = try body.conditions.map { text throws(DepotError) in try RolloutCondition(parsing: text) }
        let shares = body.shares.map { ($0.version, $0.basisPoints) }
        var seen = Set<Int>()
        if let repeated = shares.first(where: { !seen.insert($0.0).inserted }) {
            throw DepotError(.badRequest, "Version \(repeated.0) appears twice in the split; name each version once.")
        }
        let fresh = Self.randomHex(4)
        let salt = Self.randomHex(8)
        return try await change(context) { rollout in
            var rollout = rollout
            if let index = rollout.rules.firstIndex(where: { $0.name == name }) {
                rollout.rules[index].conditions = conditions
                rollout.rules[index].split = try rollout.rules[index].split.resized(to: Dictionary(uniqueKeysWithValues: shares))
            } else {
                rollout.rules.append(Rollout.Rule(id: "r-\(fresh)", name: name, salt: "s-\(salt)", conditions: conditions,
                                                  split: try RolloutSplit(shares: shares)))
            }
            return rollout
        }
    }

    func removeRule(_ request: Request, context: AppRequestContext) async throws -> Response {
        let name = try ruleName(context)
        return try await change(context) { rollout in
            var rollout = rollout
            guard let index = rollout.rules.firstIndex(where: { $0.name == name }) else {
                throw DepotError(.notFound, "The rollout has no rule named '\(name)'. See the rules with 'depot rollout show'.")
            }
            rollout.rules.remove(at: index)
            return rollout
        }
    }

    func pin(_ request: Request, context: AppRequestContext) async throws -> Response {
        let installationID = try self.installationID(context)
        let choice = try await request.decodeJSON(RolloutVersionChoice.self, context: context)
        guard let version = choice.version else {
            throw DepotError(.badRequest, "A pin needs a version; to remove a pin, unpin the device.")
        }
        return try await change(context) { rollout in
            var rollout = rollout
            rollout.pins.removeAll { $0.installationID == installationID }
            rollout.pins.append(Rollout.Pin(installationID: installationID, version: version))
            return rollout
        }
    }

    func unpin(_ request: Request, context: AppRequestContext) async throws -> Response {
        let installationID = try self.installationID(context)
        return try await change(context) { rollout in
            var rollout = rollout
            guard rollout.pins.contains(where: { $0.installationID == installationID }) else {
                throw DepotError(.notFound, "No device '\(installationID)' is pinned.")
            }
            rollout.pins.removeAll { $0.installationID == installationID }
            return rollout
        }
    }

    private func change(_ context: AppRequestContext, _ body: @escaping @Sendable (Rollout) throws -> Rollout) async throws -> Response {
        let name = try context.modelName()
        let rollout = try await catalog.changeRollout(of: name, by: try context.requirePrincipal().id, at: clock(), body)
        manifests.invalidate(name)
        return try JSONResponse.make(rollout)
    }

    private func ruleName(_ context: AppRequestContext) throws -> String {
        let text = context.parameters.get("rule") ?? ""
        guard (try? ModelName(text)) != nil else {
            throw DepotError(.invalidName, "Rule name '\(text.prefix(80))' is not allowed: use 1 to 64 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit.")
        }
        return text
    }

    private func installationID(_ context: AppRequestContext) throws -> String {
        let text = (context.parameters.get("installationID") ?? "").lowercased()
        guard (1...256).contains(text.utf8.count) else {
            throw DepotError(.badRequest, "An installation id has 1 to 256 characters.")
        }
        return text
    }

    private static func randomHex(_ bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) }.hex
    }
}
