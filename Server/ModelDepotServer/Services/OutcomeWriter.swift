import ModelDepotShared
import NIOConcurrencyHelpers
import NIOCore

/// Applies outcome batches in groups: a group starts at most every ``pace`` after the one before,
/// and the batches that arrive meanwhile wait and go together in it (each whole or not at all).
/// A device gets its answer only once its batch is committed, and what a transaction costs
/// besides its batches (reading the model, the commit: SQLite's WAL writes, a round trip to
/// PostgreSQL) is shared by every batch of a group. A batch after a quiet moment goes at once.
///
/// Batches come from the router (``record(_:of:)``) and from the fast path's event loops
/// (``submit(_:of:on:completion:)``, no task per batch); one task writes while there are any.
/// A group's answers for one event loop go to it together, in one task.
final class OutcomeWriter: Sendable {
    typealias Completion = @Sendable (Result<Bool, any Error>) -> Void
    private typealias Waiting = (model: ModelName, batch: OutcomeBatchRecord, eventLoop: (any EventLoop)?, completion: Completion)

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
            submit(batch, of: model, on: nil) { answer.resume(with: $0) }
        }
    }

    /// Queues a batch; `completion` runs once its group is committed or failed: on `eventLoop`,
    /// or on the writing task when `nil`.
    func submit(_ batch: OutcomeBatchRecord, of model: ModelName, on eventLoop: (any EventLoop)?, completion: @escaping Completion) {
        let start = state.withLockedValue { state in
            state.waiting.append((model, batch, eventLoop, completion))
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
            let results: [Result<Bool, any Error>]
            do {
                results = try await catalog.recordOutcomes(group.map { ($0.model, $0.batch) }).map { $0.mapError { $0 } }
            } catch {
                results = Array(repeating: .failure(error), count: group.count)
            }
            Self.answer(group, results)
        }
    }

    /// Runs each batch's completion with its result, those of one event loop in one task on it.
    private static func answer(_ group: [Waiting], _ results: [Result<Bool, any Error>]) {
        var byLoop: [ObjectIdentifier: (eventLoop: any EventLoop, answers: [(Completion, Result<Bool, any Error>)])] = [:]
        for (entry, result) in zip(group, results) {
            guard let eventLoop = entry.eventLoop else {
                entry.completion(result)
                continue
            }
            byLoop[ObjectIdentifier(eventLoop), default: (eventLoop, [])].answers.append((entry.completion, result))
        }
        for (eventLoop, answers) in byLoop.values {
            eventLoop.execute {
                for (completion, result) in answers { completion(result) }
            }
        }
    }
}
