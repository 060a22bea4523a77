import ModelDepotShared

/// Applies outcome batches in groups: while one transaction commits, the batches that arrive
/// wait and go together in the next (each whole or not at all, by its own savepoint). A device
/// gets its answer only once its batch is committed, and the commits (the fsync of SQLite's WAL,
/// a round trip to PostgreSQL) are shared by every batch of a group.
actor OutcomeWriter {
    private typealias Waiting = (model: ModelName, batch: OutcomeBatchRecord, answer: CheckedContinuation<Bool, any Error>)

    private let catalog: any ModelCatalog
    private var waiting: [Waiting] = []
    private var writing = false

    /// The most batches one transaction applies.
    static let groupSize = 256

    init(catalog: any ModelCatalog) {
        self.catalog = catalog
    }

    /// Applies a batch with the others waiting.
    /// - Returns: `false` when a batch with its id was applied before.
    /// - Throws: The batch's refusal (``ModelCatalog/recordOutcomes(_:)``), or the transaction's failure.
    func record(_ batch: OutcomeBatchRecord, of model: ModelName) async throws -> Bool {
        try await withCheckedThrowingContinuation { answer in
            waiting.append((model, batch, answer))
            if !writing {
                writing = true
                Task { await writeGroups() }
            }
        }
    }

    private func writeGroups() async {
        while !waiting.isEmpty {
            let group = Array(waiting.prefix(Self.groupSize))
            waiting.removeFirst(group.count)
            do {
                let results = try await catalog.recordOutcomes(group.map { ($0.model, $0.batch) })
                for (entry, result) in zip(group, results) { entry.answer.resume(with: result.mapError { $0 }) }
            } catch {
                for entry in group { entry.answer.resume(throwing: error) }
            }
        }
        writing = false
    }
}
