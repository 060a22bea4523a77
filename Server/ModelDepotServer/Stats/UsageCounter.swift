import Foundation
import ModelDepotShared
import Synchronization

/// Manifests served and downloads completed, counted in memory per minute and written to the
/// catalog in batches (``UsageFlushService``): no request waits for a database write.
public final class UsageCounter: Sendable {
    /// What was used: a manifest of a version, or a whole file (attributed to versions at flush).
    public enum Subject: Sendable, Hashable {
        case manifest(model: ModelName, version: Int)
        case download(sha256: String)
    }

    /// One counter.
    public struct Key: Sendable, Hashable {
        public let subject: Subject
        public let arm: String
        public let minute: Int

        public var isDownload: Bool {
            if case .download = subject { return true }
            return false
        }
    }

    private let counts = Mutex<[Key: Int]>([:])
    private let clock: @Sendable () -> Date

    init(clock: @escaping @Sendable () -> Date) {
        self.clock = clock
    }

    func record(_ subject: Subject, arm: String) {
        let key = Key(subject: subject, arm: arm, minute: Int(clock().timeIntervalSince1970 / 60))
        counts.withLock { $0[key, default: 0] += 1 }
    }

    /// Writes what was counted; on failure puts it back for the next attempt.
    func flush(to catalog: any ModelCatalog) async throws {
        let batch = counts.withLock { counts in
            defer { counts = [:] }
            return counts
        }
        do {
            try await catalog.recordUsage(batch)
        } catch {
            counts.withLock { counts in counts.merge(batch, uniquingKeysWith: +) }
            throw error
        }
    }
}
