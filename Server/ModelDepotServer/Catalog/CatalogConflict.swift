import ModelDepotShared

/// The refusals of a write that would overwrite what exists, the same from every catalog: each
/// backend detects the conflict its own way (a query, `ON CONFLICT DO NOTHING`) and throws one
/// of these.
enum CatalogConflict {
    static func modelExists(_ name: ModelName) -> DepotError {
        DepotError(.alreadyExists, "Model '\(name)' exists already. Upload a new version to it, or choose another name.")
    }

    static func keyExists(_ id: String) -> DepotError {
        DepotError(.alreadyExists, "A key with id '\(id)' exists already.")
    }

    static func rootDocumentExists(_ version: Int) -> DepotError {
        DepotError(.conflict, "Root document v\(version) exists already; root documents are immutable. Publish v\(version + 1) with 'depot keys rotate'.")
    }
}
