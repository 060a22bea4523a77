import ModelDepotShared
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Applies outcome batches in groups: after a group, the batches that arrive go together in the
/// next one (each whole or not at all, at most one of the catalog's transactions:
/// ``ModelCatalog/outcomesPerTransaction``), which starts once none has arrived for ``quiet`` or
/// ``pace`` after the one before, whichever comes first, or at once when a full group waits. A
/// device gets its answer only once its batch is committed, and what a transaction costs besides
/// its batches (reading the model, the commit: SQLite's WAL writes, a round trip to PostgreSQL) is
/// shared by every batch of a group: a steady stream of batches from many devices is written 20
/// times a second, and devices that each wait for their answer (a test's, a benchmark's
/// connections) are not kept waiting longer than it takes them all to send. A batch after a quiet
/// moment goes at once.
///
/// Batches come from the router (``record(_:of:)``) and from the fast path's event loops
/// (``submit(_:of:on:completion:)``, no task per batch); a task writes each group. While a group
/// gathers, an event loop's timer looks at the arrivals (the loop is awake for the requests
/// anyway), not a sleeping task that a thread has to wake for every look.
/// A group's answers for one event loop go to it together, in one task.
final class OutcomeWriter: Sendable {
    typealias Completion = @Sendable (Result<Bool, any Error>) -> Void
    typealias Apply = @Sendable ([(model: ModelName, batch: OutcomeBatchRecord)]) async throws -> [Result<Bool, DepotError>]
    private typealias Waiting = (model: ModelName, batch: OutcomeBatchRecord, eventLoop: (any EventLoop)?, completion: Completion)

    private struct State {
        var waiting: [Waiting] = []
        var lastArrival = NIODeadline.now()
        /// A group is being written, or the next one gathers.
        var busy = false
    }

    /// Applies a group: ``ModelCatalog/recordOutcomes(_:)``.
    private let apply: Apply
    /// The most batches in a group.
    let groupSize: Int
    /// The event loop whose timer looks at a gathering group: one of those the server answers on.
    private let timers = MultiThreadedEventLoopGroup.singleton.next()
    private let state = NIOLockedValueBox(State())

    /// The longest time from one group's start to the next one's while batches keep arriving.
    static let pace = TimeAmount.milliseconds(50)
    /// How long no batch arrives before the next group starts sooner than ``pace``: several
    /// times the gap between batches at a rate where grouping them saves the server's CPU
    /// (1,500 a second: 0.7 ms on average, and a gap of 3 ms about once in 90).
    static let quiet = TimeAmount.milliseconds(3)

    convenience init(catalog: any OutcomeCatalog) {
        self.init(groupSize: catalog.outcomesPerTransaction, apply: catalog.recordOutcomes)
    }

    init(groupSize: Int, apply: @escaping Apply) {
        self.groupSize = groupSize
        self.apply = apply
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
            state.lastArrival = .now()
            defer { state.busy = true }
            return !state.busy
        }
        if start { Task { await writeGroups() } }
    }

    /// Writes groups while the next one may start at once; then leaves it to ``gather(since:)``.
    private func writeGroups() async {
        while true {
            let started = NIODeadline.now()
            let group = state.withLockedValue { state in
                let group = Array(state.waiting.prefix(groupSize))
                state.waiting.removeFirst(group.count)
                return group
            }
            let results: [Result<Bool, any Error>]
            do {
                results = try await apply(group.map { ($0.model, $0.batch) }).map { $0.mapError { $0 } }
            } catch {
                results = Array(repeating: .failure(error), count: group.count)
            }
            Self.answer(group, results)
            guard gather(since: started) else { return }
        }
    }

    /// What follows a group.
    private enum Next {
        /// The next group starts at once.
        case now
        /// The timer loop looks again then.
        case lookAgain(NIODeadline)
        /// None is waiting: the next batch starts the writer again.
        case stop
    }

    /// Whether the next group may start now: a group is full, no batch has arrived for
    /// ``quiet``, or it is ``pace`` after `started`. Otherwise the timer loop looks again then
    /// (and starts the group's task once it may); with none waiting the writer stops until the
    /// next batch.
    private func gather(since started: NIODeadline) -> Bool {
        let next: Next = state.withLockedValue { state in
            guard !state.waiting.isEmpty else {
                state.busy = false
                return .stop
            }
            let wake = min(state.lastArrival + Self.quiet, started + Self.pace)
            return state.waiting.count < groupSize && NIODeadline.now() < wake ? .lookAgain(wake) : .now
        }
        switch next {
        case .now:
            return true
        case .stop:
            return false
        case .lookAgain(let wake):
            timers.scheduleTask(deadline: wake) {
                if self.gather(since: started) { Task { await self.writeGroups() } }
            }
            return false
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
