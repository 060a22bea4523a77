import Foundation
import Synchronization

/// The patch jobs that failed, each with when to try it again: after 1, 2, 4, … minutes, at most
/// a day (a job that fails after the costly part, such as a full temporary directory, is not
/// redone at every look). Kept in memory: a restart tries everything once more.
final class PatchFailures: Sendable {
    private let failures = Mutex<[PatchPlan.Job: (count: Int, retryAt: Date)]>([:])

    /// Whether `job` may be tried at `now`.
    func isDue(_ job: PatchPlan.Job, at now: Date) -> Bool {
        failures.withLock { $0[job].map { $0.retryAt <= now } ?? true }
    }

    /// Records a failure of `job` at `now`; returns when it is tried again.
    @discardableResult
    func failed(_ job: PatchPlan.Job, at now: Date) -> Date {
        failures.withLock { all in
            let count = (all[job]?.count ?? 0) + 1
            let retryAt = now.addingTimeInterval(min(60 * pow(2, Double(count - 1)), 86_400))
            all[job] = (count, retryAt)
            return retryAt
        }
    }

    /// Forgets `job`'s failures (it succeeded).
    func succeeded(_ job: PatchPlan.Job) {
        _ = failures.withLock { $0.removeValue(forKey: job) }
    }
}
