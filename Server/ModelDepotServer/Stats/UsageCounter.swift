import Foundation
import ModelDepotRollouts
import ModelDepotShared
import Synchronization

/// Manifests served and downloads completed, counted in memory per minute, and the installations
/// each arm handed versions to, written to the catalog in batches (a ``PeriodicWork``): no
/// request waits for a database write.
public final class UsageCounter: Sendable {
    /// What was used: a manifest of a version, or a whole file (attributed to versions at flush).
    public enum Subject: Sendable, Hashable {
        case manifest(model: ModelName, version: Int)
        case download(sha256: String)

        /// What is counted: a manifest served or a download completed.
        public var kind: UsageKind {
            switch self {
            case .manifest: .manifest
            case .download: .download
            }
        }
    }

    /// One counter.
    public struct Key: Sendable, Hashable {
        public let subject: Subject
        public let arm: CountedArm
        public let minute: Int

        /// What is counted: a manifest served or a download completed.
        public var kind: UsageKind { subject.kind }
    }

    /// An installation seen with an arm and version of a model (its id as ``IdentifierKey`` stores it).
    public struct Installation: Sendable, Hashable {
        public let model: ModelName
        public let arm: CountedArm
        public let version: Int
        public let installation: Int64
    }

    /// Installations seen between two flushes at most, and remembered as written at most;
    /// beyond it new ones wait for the next interval (a device checks again), so memory stays
    /// bounded under any traffic.
    static let installationCapacity = 1 << 20
    /// Installations written per catalog transaction: a flush after many new installations
    /// leaves the catalog's writer, which outcome batches wait for, free between transactions.
    static let installationsPerWrite = 2_000
    /// How long installations written are remembered (not sent again: the catalog keeps the
    /// minute each was first seen, and ignores them). Forgotten after it, so that one seen again
    /// after its model was deleted and created anew under the same name is written within it.
    static let writtenMemory: TimeInterval = 3_600

    /// Installations seen since the last flush, with the minute they were first seen, and the
    /// hash values of those written since `writtenSince`.
    private struct Installations {
        var seen: [Installation: Int] = [:]
        var written: Set<Int> = []
        var writtenSince: Date?

        /// Whether an installation (its hash value) was written within ``UsageCounter/writtenMemory``.
        mutating func wasWritten(_ installation: Int, at now: Date) -> Bool {
            forgetWritten(at: now)
            return written.contains(installation)
        }

        mutating func remember(_ installations: some Collection<Installation>, at now: Date) {
            forgetWritten(at: now)
            if written.count + installations.count > UsageCounter.installationCapacity { (written, writtenSince) = ([], nil) }
            if writtenSince == nil { writtenSince = now }
            for installation in installations { written.insert(installation.hashValue) }
        }

        private mutating func forgetWritten(at now: Date) {
            if let since = writtenSince, now.timeIntervalSince(since) >= UsageCounter.writtenMemory { (written, writtenSince) = ([], nil) }
        }
    }

    private let counts = Mutex<[Key: Int]>([:])
    private let installations = Mutex(Installations())
    private let clock: @Sendable () -> Date
    private let identifiers: IdentifierKey

    init(identifiers: IdentifierKey, clock: @escaping @Sendable () -> Date) {
        self.identifiers = identifiers
        self.clock = clock
    }

    func record(_ subject: Subject, arm: CountedArm) {
        let key = Key(subject: subject, arm: arm, minute: Int(clock().timeIntervalSince1970 / 60))
        counts.withLock { $0[key, default: 0] += 1 }
    }

    /// Notes that an installation got `version` of `model` through `arm`.
    func record(installation id: String, model: ModelName, version: Int, arm: CountedArm) {
        let key = Installation(model: model, arm: arm, version: version, installation: identifiers.installation(id))
        let written = key.hashValue
        let now = clock()
        let minute = Int(now.timeIntervalSince1970 / 60)
        installations.withLock { installations in
            guard installations.seen[key] == nil, !installations.wasWritten(written, at: now),
                installations.seen.count < Self.installationCapacity
            else { return }
            installations.seen[key] = minute
        }
    }

    /// Writes what was counted, the installations in transactions of ``installationsPerWrite``
    /// (the counts with the first); on failure puts back what was not written, for the next attempt.
    func flush(to catalog: any UsageCatalog) async throws {
        let batch = counts.withLock { counts in
            defer { counts = [:] }
            return counts
        }
        let seen = installations.withLock { installations in
            defer { installations.seen = [:] }
            return installations.seen.map { ($0.key, $0.value) }
        }
        var written = 0
        do {
            repeat {
                let part = seen[written..<min(written + Self.installationsPerWrite, seen.count)]
                try await catalog.recordUsage(written == 0 ? batch : [:], installations: Dictionary(uniqueKeysWithValues: part))
                installations.withLock { $0.remember(part.lazy.map(\.0), at: clock()) }
                written += part.count
            } while written < seen.count
        } catch {
            if written == 0 { counts.withLock { counts in counts.merge(batch, uniquingKeysWith: +) } }
            installations.withLock { installations in installations.seen.merge(seen[written...]) { min($0, $1) } }
            throw error
        }
    }
}
