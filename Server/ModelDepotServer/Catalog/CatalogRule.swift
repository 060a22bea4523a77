import ModelDepotRollouts
import ModelDepotShared

/// Every rule a catalog enforces, with its error, written once: each backend finds out whether a
/// rule holds its own way (a query, a row lock, `ON CONFLICT DO NOTHING`) and throws what is
/// here, so SQLite and PostgreSQL refuse the same change with the same code and message.
enum CatalogRule {
    static func modelExists(_ name: ModelName) -> DepotError {
        DepotError(.alreadyExists, "Model '\(name)' exists already. Upload a new version to it, or choose another name.")
    }

    static func keyExists(_ id: String) -> DepotError {
        DepotError(.alreadyExists, "A key with id '\(id)' exists already.")
    }

    static func rootDocumentExists(_ version: Int) -> DepotError {
        DepotError(
            .conflict,
            "Root document v\(version) exists already; root documents are immutable. Publish v\(version + 1) with 'depot keys rotate'.")
    }

    static func noModel(_ name: ModelName) -> DepotError {
        DepotError(
            .notFound, "No model is named '\(name)'. List models with 'depot models list', or create it with 'depot models create \(name)'."
        )
    }

    static func noVersion(_ number: Int, of name: String) -> DepotError {
        DepotError(.notFound, "Model '\(name)' has no version \(number). List its versions with 'depot versions \(name)'.")
    }

    static func noKey(_ id: String) -> DepotError {
        DepotError(.notFound, "No key has id '\(id)'. List keys with 'depot keys list'.")
    }

    /// A model with versions is deleted only with `force`.
    static func modelHasVersions(_ name: ModelName, count: Int) -> DepotError {
        DepotError(
            .conflict,
            "Model '\(name)' has \(count) version(s). Delete them first, or delete the model with all its versions: 'depot models delete \(name) --force' (DELETE with ?force=true)."
        )
    }

    /// The last working admin token is never revoked.
    static func lastAdminToken(_ id: String) -> DepotError {
        DepotError(
            .conflict, "Key '\(id)' is the last working admin token; revoking it would lock everyone out. Create another admin token first."
        )
    }

    /// A rollout change, as saved (``RolloutCatalog/changeRolloutAndGuards(of:by:at:naming:allowsShadowed:_:)``)
    /// and as the console previews it: see ``checkPublished(_:naming:of:published:)`` and
    /// ``checkReachable(before:after:allowsShadowed:)``.
    static func checkChange(
        of name: ModelName, before: Rollout, after: Rollout, naming: [Int], published: Set<Int>, allowsShadowed: Bool
    ) throws {
        try checkPublished(after, naming: naming, of: name, published: published)
        try checkReachable(before: before, after: after, allowsShadowed: allowsShadowed)
    }

    /// A rollout hands out published versions only, and a change names no other version, also
    /// at 0% (`naming`).
    private static func checkPublished(_ rollout: Rollout, naming named: [Int], of name: ModelName, published: Set<Int>) throws {
        if let version = rollout.versions.union(named).sorted().first(where: { !published.contains($0) }) {
            throw DepotError(
                .badRequest,
                "Model '\(name)' has no published version \(version); the rollout can only hand out published versions. Upload or publish it first; the previous rollout stays in force."
            )
        }
    }

    /// A change leaves no rule that no device can reach (``Rollout/unreachableRules``) unless it
    /// was unreachable before or the change `allowsShadowed` it.
    private static func checkReachable(before: Rollout, after: Rollout, allowsShadowed: Bool) throws {
        guard !allowsShadowed else { return }
        let unreachable = after.unreachableRules.filter { before.unreachableRules[$0.key] == nil }
        guard let rule = after.rules.first(where: { unreachable[$0.id] != nil }), let earlier = unreachable[rule.id] else { return }
        throw DepotError(
            .conflict,
            "Rule '\(rule.name)' could never be used: rule '\(earlier)' comes before it and matches every device it would match, so no device would reach it. Give it a condition '\(earlier)' does not cover, change or remove '\(earlier)', or keep it anyway with --allow-shadowed (\"allowShadowed\": true); the rollout stays as it was."
        )
    }

    /// A version the rollout hands out is neither unpublished nor deleted.
    static func checkNotInRollout(_ rollout: Rollout, version number: Int, of name: String, doing action: String) throws {
        let uses = rollout.uses(of: number)
        guard uses.isEmpty else {
            throw DepotError(
                .conflict,
                "Cannot \(action) version \(number) of '\(name)': the rollout hands it out (\(uses.joined(separator: ", "))). Change the rollout first."
            )
        }
    }

    /// Outcome events name only versions the model has.
    static func checkOutcomeVersions(_ batch: OutcomeBatchRecord, of name: ModelName, existing: Set<Int>) throws(DepotError) {
        guard !batch.exposures.allSatisfy({ existing.contains($0.version) }) else { return }
        if let version = batch.versions.sorted().first(where: { !existing.contains($0) }) {
            throw DepotError(
                .invalidEvents,
                "Batch \(batch.id) reports version \(version) of '\(name)', which does not exist; nothing of the batch was stored. Send events only for versions a manifest handed out."
            )
        }
    }

    /// An app records at most ``ExperimentMetric/maximumUndeclared`` names it did not declare.
    static func checkUndeclared(_ new: Set<String>, of name: ModelName, alreadyUndeclared count: Int) throws(DepotError) {
        guard count + new.count <= ExperimentMetric.maximumUndeclared else {
            throw DepotError(
                .invalidMetric,
                "Metric '\(new.sorted()[0])' of '\(name)' is not declared, and \(count) undeclared metrics are recorded already (at most \(ExperimentMetric.maximumUndeclared)); its events were not stored. Declare it with 'depot experiment metric add \(name) \(new.sorted()[0])', or remove an undeclared name with 'depot experiment metric remove'."
            )
        }
    }

    /// An installation sends at most ``OutcomeBatch/maximumEventsPerHour`` events per model and hour.
    static func checkHourlyEvents(_ total: Int, of name: ModelName) throws(DepotError) {
        guard total <= OutcomeBatch.maximumEventsPerHour else {
            throw DepotError(
                .tooManyRequests,
                "This installation sent more than \(OutcomeBatch.maximumEventsPerHour) events for '\(name)' this hour; nothing of the batch was stored. Send it again next hour."
            )
        }
    }

    /// A model has at most ``ExperimentMetric/maximumDeclared`` declared metrics.
    static func checkDeclared(_ count: Int, adding metric: String, of name: ModelName) throws {
        guard count < ExperimentMetric.maximumDeclared else {
            throw DepotError(
                .invalidMetric,
                "Model '\(name)' has \(count) declared metrics, the most allowed; '\(metric)' was not declared. Remove one with 'depot experiment metric remove'."
            )
        }
    }

    static func noMetric(_ metric: String, of name: ModelName) -> DepotError {
        DepotError(.notFound, "Model '\(name)' has no metric '\(metric)'. List them with 'depot experiment metrics \(name)'.")
    }
}
