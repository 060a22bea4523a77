import Foundation
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

    /// An installation seen with an arm and version of a model (its id as a 64-bit hash).
    public struct Installation: Sendable, Hashable {
        public let model: ModelName
        public let arm: CountedArm
        public let version: Int
        public let installation: Int64
    }

    /// Installations seen between two flushes at most; beyond it new ones wait for the next
    /// interval (a device checks again), so memory stays bounded under any traffic.
    static let installationCapacity = 1 << 20

    private let counts = Mutex<[Key: Int]>([:])
    /// Installations seen since the last flush, with the minute they were first seen.
    private let installations = Mutex<[Installation: Int]>([:])
    private let clock: @Sendable () -> Date

    init(clock: @escaping @Sendable () -> Date) {
        self.clock = clock
    }

    func record(_ subject: Subject, arm: CountedArm) {
        let key = Key(subject: subject, arm: arm, minute: Int(clock().timeIntervalSince1970 / 60))
        counts.withLock { $0[key, default: 0] += 1 }
    }

    /// Notes that an installation got `version` of `model` through `arm`.
    func record(installation id: String, model: ModelName, version: Int, arm: CountedArm) {
        let key = Installation(model: model, arm: arm, version: version, installation: Self.hash(id))
        let minute = Int(clock().timeIntervalSince1970 / 60)
        installations.withLock { seen in
            guard seen[key] == nil, seen.count < Self.installationCapacity else { return }
            seen[key] = minute
        }
    }

    /// FNV-1a (64 bits) of the id's UTF-8 bytes (``DeviceContext`` lower-cased it already, as
    /// devices are bucketed).
    static func hash(_ id: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in id.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }

    /// Writes what was counted; on failure puts it back for the next attempt.
    func flush(to catalog: any ModelCatalog) async throws {
        let batch = counts.withLock { counts in
            defer { counts = [:] }
            return counts
        }
        let seen = installations.withLock { seen in
            defer { seen = [:] }
            return seen
        }
        do {
            try await catalog.recordUsage(batch, installations: seen)
        } catch {
            counts.withLock { counts in counts.merge(batch, uniquingKeysWith: +) }
            installations.withLock { pending in pending.merge(seen) { min($0, $1) } }
            throw error
        }
    }
}
