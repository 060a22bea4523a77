import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// Everything a SQLite catalog holds, read at once for `depot migrate`: rows keyed by model name
/// (ids belong to one database), dates and documents as they are stored.
struct CatalogSnapshot: Sendable {
    struct Model: Sendable { let name: String, description: String, tags: [String], createdAt: Date, lastVersionNumber: Int }
    struct Version: Sendable {
        let model: String, number: Int, sha256: String, size: Int, notes: String, published: Bool
        let createdAt: Date, publishedAt: Date?, tflite: TFLiteModelDescription, files: [CompanionFile], uploadedBy: String?
    }
    struct Key: Sendable { let key: AccessKey, secretHash: [UInt8] }
    struct RolloutRow: Sendable { let model: String, document: Rollout, updatedAt: Date }
    struct Change: Sendable { let model: String, keyID: String, at: Date, before: Rollout, after: Rollout, reason: String? }
    struct Usage: Sendable { let model: String, version: Int, arm: CountedArm, kind: UsageKind, minute: Int, count: Int }
    struct Installation: Sendable { let model: String, arm: CountedArm, version: Int, installation: Int64, minute: Int }
    struct Root: Sendable { let version: Int, envelope: Data, createdAt: Date }
    struct Outcome: Sendable { let model: String, metric: String, arm: String, row: OutcomeRow }
    struct Exposure: Sendable { let model: String, arm: String, exposure: OutcomeExposure }
    struct Batch: Sendable { let model: String, id: String, hour: Int }
    struct Metric: Sendable { let model: String, metric: AppMetric }
    struct Guards: Sendable { let model: String, guards: [StoredRolloutGuard], hasWork: Bool }

    var models: [Model] = []
    var versions: [Version] = []
    /// Patches made, offered or not: the target does not make them again.
    var patches: [StoredPatch] = []
    var keys: [Key] = []
    var rollouts: [RolloutRow] = []
    var changes: [Change] = []
    var usage: [Usage] = []
    var installations: [Installation] = []
    var sequences: [(name: String, last: Int)] = []
    var roots: [Root] = []
    var outcomes: [Outcome] = []
    var exposures: [Exposure] = []
    /// Batch ids applied: a device sending one again after the move is not counted twice.
    var batches: [Batch] = []
    var metrics: [Metric] = []
    var guards: [Guards] = []
}
