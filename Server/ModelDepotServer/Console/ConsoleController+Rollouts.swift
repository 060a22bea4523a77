import Crypto
import Foundation
import Hummingbird
import ModelDepotRollouts
import ModelDepotShared

/// The rollout page: the default version, rules with conditions and a split, pins and the audit
/// history. A change to the default or a rule is previewed first (which share of devices moves
/// from which version to which), then saved only if the rollout is still the one previewed.
extension ConsoleController {
    func registerRollouts(in console: RouterGroup<AppRequestContext>) {
        console.get("models/:name/rollout", use: showRollout)
        console.post("models/:name/rollout/default", use: changeDefault)
        console.post("models/:name/rollout/rules", use: changeRule)
        console.post("models/:name/rollout/rules/:rule/remove", use: removeRule)
        console.post("models/:name/rollout/pins", use: pin)
        console.post("models/:name/rollout/pins/remove", use: unpin)
    }

    func showRollout(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, _) = try await signedIn(request, context: context)
        let name = try context.modelName()
        let rollout = try await catalog.rollout(of: name)
        let editing = request.uri.queryParameters.get("rule").flatMap { rule in rollout.rules.first { $0.name == rule } }
        return try await rolloutPage(name, csrf: session.csrfToken, draft: editing.map(ConsolePages.RuleDraft.init), error: nil)
    }

    func changeDefault(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, key, form) = try await signedInWithKey(request, context: context, checkingForm: true)
        let name = try context.modelName()
        let text = form?["version"] ?? ""
        guard text.isEmpty || Int(text) != nil else {
            return try await rolloutPage(
                name, csrf: session.csrfToken, draft: nil, error: "Default version '\(text.prefix(20))' is not a version number.",
                status: .badRequest)
        }
        let version = Int(text)
        return try await previewOrSave(
            name, form: form, session: session, key: key, draft: nil,
            action: "/console/models/\(name)/rollout/default", fields: [("version", text)]
        ) {
            RolloutEdits.settingDefault(version, in: $0)
        }
    }

    func changeRule(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, key, form) = try await signedInWithKey(request, context: context, checkingForm: true)
        let name = try context.modelName()
        let draft = ConsolePages.RuleDraft(form: form?.fields ?? [:])
        let parsed: (rule: String, conditions: [RolloutCondition], shares: [(Int, Int)])
        do {
            parsed = (
                try RolloutEdits.ruleName(draft.rule),
                try draft.conditionLines.map { text throws(DepotError) in try RolloutCondition(parsing: text) },
                try draft.basisPoints()
            )
        } catch let error as DepotError {
            return try await rolloutPage(name, csrf: session.csrfToken, draft: draft, error: error.message, status: error.status)
        }
        let identity = RolloutEdits.freshRuleIdentity()
        return try await previewOrSave(
            name, form: form, session: session, key: key, draft: draft,
            action: "/console/models/\(name)/rollout/rules", fields: draft.fields, naming: parsed.shares.map(\.0)
        ) {
            try RolloutEdits.settingRule(
                parsed.rule, conditions: parsed.conditions, shares: parsed.shares, newIdentity: identity, in: $0)
        }
    }

    func removeRule(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, key, form) = try await signedInWithKey(request, context: context, checkingForm: true)
        let name = try context.modelName()
        let rule = try RolloutEdits.ruleName(context.parameters.get("rule") ?? "")
        return try await previewOrSave(
            name, form: form, session: session, key: key, draft: nil,
            action: "/console/models/\(name)/rollout/rules/\(rule)/remove", fields: []
        ) {
            try RolloutEdits.removingRule(named: rule, from: $0)
        }
    }

    func pin(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, key, form) = try await signedInWithKey(request, context: context, checkingForm: true)
        let name = try context.modelName()
        do {
            let installation = try RolloutEdits.installationID((form?["installation"] ?? "").trimmingCharacters(in: .whitespaces))
            guard let version = Int(form?["version"] ?? "") else {
                throw DepotError(.badRequest, "A pin needs a version; choose one of the published versions.")
            }
            _ = try await rollouts.change(name, by: key.id) { RolloutEdits.pinning(installation, to: version, in: $0) }
            return Response(status: .seeOther, headers: [.location: "/console/models/\(name)/rollout"])
        } catch let error as DepotError {
            return try await rolloutPage(name, csrf: session.csrfToken, draft: nil, error: error.message, status: error.status)
        }
    }

    func unpin(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, key, form) = try await signedInWithKey(request, context: context, checkingForm: true)
        let name = try context.modelName()
        do {
            let installation = try RolloutEdits.installationID(form?["installation"] ?? "")
            _ = try await rollouts.change(name, by: key.id) { try RolloutEdits.unpinning(installation, in: $0) }
            return Response(status: .seeOther, headers: [.location: "/console/models/\(name)/rollout"])
        } catch let error as DepotError {
            return try await rolloutPage(name, csrf: session.csrfToken, draft: nil, error: error.message, status: error.status)
        }
    }

    /// Without `confirm=yes`: the preview of `change` applied to the rollout in force, with a form
    /// that saves it. With it: saves `change` if the rollout is still the one previewed (`basis`).
    private func previewOrSave(
        _ name: ModelName, form: ConsoleForm?, session: ConsoleSession, key: AccessKey,
        draft: ConsolePages.RuleDraft?, action: String, fields: [(String, String)], naming: [Int] = [],
        _ change: @escaping @Sendable (Rollout) throws -> Rollout
    ) async throws -> Response {
        if form?["confirm"] == "yes" {
            let basis = form?["basis"] ?? ""
            do {
                let newest = try await catalog.versions(of: name).filter(\.published).map(\.version).max()
                _ = try await rollouts.change(name, by: key.id, naming: naming) { current in
                    guard Self.fingerprint(current, newestPublished: newest) == basis else {
                        throw DepotError(
                            .conflict,
                            "The rollout or the newest published version changed after this preview (someone else saved a change); nothing was saved. Look at the rollout as it is now and make the change again."
                        )
                    }
                    return try change(current)
                }
                return Response(status: .seeOther, headers: [.location: "/console/models/\(name)/rollout"])
            } catch let error as DepotError {
                return try await rolloutPage(name, csrf: session.csrfToken, draft: draft, error: error.message, status: error.status)
            }
        }
        let before = try await catalog.rollout(of: name)
        let published = Set(try await catalog.versions(of: name).filter(\.published).map(\.version))
        do {
            // The service's own checks, so the preview never offers what saving refuses.
            let after = try RolloutService.checked(
                name, before: before, naming: naming, published: published, allowsShadowed: false, change)
            let preview = RolloutPreview(before: before, after: after, newestPublished: published.max())
            return try page(
                "rollout-preview",
                ConsolePages.RolloutPreviewPage(
                    csrf: session.csrfToken, name: name.rawValue, action: action,
                    basis: Self.fingerprint(before, newestPublished: published.max()),
                    fields: fields.map { ConsolePages.Field(name: $0.0, value: $0.1) }, preview: preview,
                    before: ConsolePages.summary(before), after: ConsolePages.summary(after)))
        } catch let error as DepotError {
            return try await rolloutPage(name, csrf: session.csrfToken, draft: draft, error: error.message, status: error.status)
        }
    }

    private func rolloutPage(
        _ name: ModelName, csrf: String, draft: ConsolePages.RuleDraft?, error: String?,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let rollout = try await catalog.rollout(of: name)
        let published = try await catalog.versions(of: name).filter(\.published).map(\.version)
        let history = try await catalog.rolloutHistory(of: name)
        let guards = try await self.guards.guards(of: name)
        return try page(
            "rollout",
            ConsolePages.RolloutPage(
                csrf: csrf, error: error, name: name.rawValue, segments: RolloutSegments(rollout, newestPublished: published.max()).lines,
                rollout: rollout, published: published, draft: draft ?? ConsolePages.RuleDraft(published: published), history: history,
                guards: guards),
            status: status)
    }

    /// A digest of what a preview was worked out from: the rollout's JSON and the newest published
    /// version (the default when none is set). The preview's form carries it; saving checks that
    /// both are still the same.
    static func fingerprint(_ rollout: Rollout, newestPublished: Int?) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let document = (try? encoder.encode(rollout)) ?? Data()
        return SHA256.hash(data: document + Data("|\(newestPublished.map(String.init) ?? "none")".utf8)).hex
    }
}
