import ModelDepotShared

/// What a usage count counts: manifests served or downloads completed. The catalogs store its
/// raw value in the `kind` column of `usage`, whose schema allows only these two.
public enum UsageKind: String, Sendable, Hashable, CaseIterable {
    /// Manifests served (`200` and `304`).
    case manifest
    /// Downloads of a file that reached its last byte.
    case download

    /// The kind a catalog row stores as `text`.
    /// - Throws: ``DepotError`` `internal_error` for text that is no kind's raw value.
    init(stored text: String) throws {
        guard let kind = UsageKind(rawValue: text) else {
            throw DepotError(
                .internalError,
                "A usage row has kind '\(text.prefix(40))', not one of \(Self.allCases.map(\.rawValue).joined(separator: ", ")). The database's usage table was changed outside the server; check its kind column."
            )
        }
        self = kind
    }
}
