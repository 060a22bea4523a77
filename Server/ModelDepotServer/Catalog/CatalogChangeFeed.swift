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
