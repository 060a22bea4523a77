import ModelDepotShared

/// The transaction port the catalog flows are written over: a backend locks one model, reads its
/// rows into a ``ModelTransaction``, runs the flow on it and applies what it wrote, all in one
/// transaction.
public protocol ModelTransactions: Sendable {
    /// Runs `body` on the model's rows under its lock (PostgreSQL's row lock, SQLite's one writer)
    /// and applies its writes in the same transaction, raising the model's manifest version when
    /// they change what manifests say. Nothing is written when `body` throws.
    /// - Returns: What `body` returned, and the digests no version references any more once the
    ///   change is committed: the caller removes those blobs (a crash before that leaves them to
    ///   the next start's clean-up).
    /// - Throws: ``DepotError``: `not_found` for a model that does not exist; what `body` throws.
    func write<T: Sendable>(model name: ModelName, _ body: @escaping @Sendable (inout ModelTransaction) throws -> T) async throws
        -> (value: T, unreferenced: Set<String>)
}
