/// The changes replicas sharing a catalog announce to each other (``PostgresModelCatalog``
/// records them in `change_event` and wakes listeners with `NOTIFY`).
protocol CatalogChangeFeed: Sendable {
    /// The changes recorded in the last `seconds`, oldest first.
    func recentChanges(within seconds: Int) async throws -> [CatalogChange]
    /// Calls `notified` whenever a replica announces a change, until the task is cancelled or
    /// the connection ends (then it throws, and the caller listens again).
    func listenForChanges(_ notified: @escaping @Sendable () -> Void) async throws
    /// Forgets changes older than `seconds` (every replica has long applied them).
    func pruneChanges(olderThan seconds: Int) async throws
}

extension PostgresModelCatalog: CatalogChangeFeed {}

/// A change made through one replica that the others must see: a model's answers, the access
/// keys, the root documents.
public struct CatalogChange: Sendable, Hashable {
    public enum Kind: String, Sendable {
        /// The model's versions, publication or rollout (`name` is the model).
        case model
        /// An access key was created or revoked.
        case keys
        /// A root document was added (the signing key may have changed).
        case root
        /// A manifest key was made pending or activated.
        case signing
    }

    public let id: Int64
    public let kind: Kind
    public let name: String
}
