import ModelDepotShared
import NIOConcurrencyHelpers

/// Applies outcome batches in groups: a group starts at most every ``pace`` after the one before,
/// and the batches that arrive meanwhile wait and go together in it (each whole or not at all).
/// A device gets its answer only once its batch is committed, and what a transaction costs
/// besides its batches (reading the model, the commit: SQLite's WAL writes, a round trip to
/// PostgreSQL) is shared by every batch of a group. A batch after a quiet moment goes at once.
///
/// Batches come from the router (``record(_:of:)``) and from the fast path's event loops
/// (``submit(_:of:completion:)``, no task per batch); one task writes while there are any.
final class OutcomeWriter: Sendable {
    typealias Completion = @Sendable (Result<Bool, any Error>) -> Void
    private typealias Waiting = (model: ModelName, batch: OutcomeBatchRecord, completion: Completion)

    private struct State {
        var waiting: [Waiting] = []
        var writing = false
    }

    private let catalog: any ModelCatalog
    private let state = NIOLockedValueBox(State())

    /// The most batches one transaction applies.
    static let groupSize = 1_024
    /// The shortest time from one group's start to the next one's.
    static let pace = Duration.milliseconds(10)

    init(catalog: any ModelCatalog) {
        self.catalog = catalog
    }

    /// Applies a batch with the others waiting.
    /// - Returns: `false` when a batch with its id was applied before.
    /// - Throws: The batch's refusal (``ModelCatalog/recordOutcomes(_:)``), or the transaction's failure.
    func record(_ batch: OutcomeBatchRecord, of model: ModelName) async throws -> Bool {
        try await withCheckedThrowingContinuation { answer in
            submit(batch, of: model) { answer.resume(with: $0) }
        }
    }

    /// Queues a batch; `completion` runs on the writing task once its group is committed or failed.
    func submit(_ batch: OutcomeBatchRecord, of model: ModelName, completion: @escaping Completion) {
        let start = state.withLockedValue { state in
            state.waiting.append((model, batch, completion))
            defer { state.writing = true }
            return !state.writing
        }
        if start { Task { await writeGroups() } }
    }

    private func writeGroups() async {
        var started: ContinuousClock.Instant?
        while true {
            if let started { try? await Task.sleep(until: started + Self.pace, clock: .continuous) }
            started = .now
            let group = state.withLockedValue { state in
                let group = Array(state.waiting.prefix(Self.groupSize))
                state.waiting.removeFirst(group.count)
                if group.isEmpty { state.writing = false }
                return group
            }
            guard !group.isEmpty else { return }
            do {
                let results = try await catalog.recordOutcomes(group.map { ($0.model, $0.batch) })
                for (entry, result) in zip(group, results) { entry.completion(result.mapError { $0 }) }
            } catch {
                for entry in group { entry.completion(.failure(error)) }
            }
        }
    }
}
