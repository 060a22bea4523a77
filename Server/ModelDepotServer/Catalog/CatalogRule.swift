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
        DepotError(.conflict, "Root document v\(version) exists already; root documents are immutable. Publish v\(version + 1) with 'depot keys rotate'.")
    }

    static func noModel(_ name: ModelName) -> DepotError {
        DepotError(.notFound, "No model is named '\(name)'. List models with 'depot models list', or create it with 'depot models create \(name)'.")
    }

    static func noVersion(_ number: Int, of name: String) -> DepotError {
        DepotError(.notFound, "Model '\(name)' has no version \(number). List its versions with 'depot versions \(name)'.")
    }

    static func noKey(_ id: String) -> DepotError {
        DepotError(.notFound, "No key has id '\(id)'. List keys with 'depot keys list'.")
    }

    /// A model with versions is deleted only with `force`.
    static func modelHasVersions(_ name: ModelName, count: Int) -> DepotError {
        DepotError(.conflict, "Model '\(name)' has \(count) version(s). Delete them first, or pass force to delete the model with all its versions.")
    }

    /// The last working admin token is never revoked.
    static func lastAdminToken(_ id: String) -> DepotError {
        DepotError(.conflict, "Key '\(id)' is the last working admin token; revoking it would lock everyone out. Create another admin token first.")
    }

    /// A rollout hands out published versions only: the catalogs check it when saving, the
    /// console when it previews a change.
    static func checkPublished(_ rollout: Rollout, of name: ModelName, published: Set<Int>) throws {
        if let version = rollout.versions.sorted().first(where: { !published.contains($0) }) {
            throw DepotError(.badRequest, "Model '\(name)' has no published version \(version); the rollout can only hand out published versions. Upload or publish it first; the previous rollout stays in force.")
        }
    }

    /// A version the rollout hands out is neither unpublished nor deleted.
    static func checkNotInRollout(_ rollout: Rollout, version number: Int, of name: String, doing action: String) throws {
        let uses = rollout.uses(of: number)
        guard uses.isEmpty else {
            throw DepotError(.conflict, "Cannot \(action) version \(number) of '\(name)': the rollout hands it out (\(uses.joined(separator: ", "))). Change the rollout first.")
        }
    }
}
