import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// One model's rows, read under the model's lock, and the changes a flow makes to them: what
/// GRDB's `db` is inside `write { db in … }`, for one model. The flows of ``ModelVersionCatalog``
/// and ``RolloutCatalog`` are written once over it, with their rule checks; a backend only reads
/// the rows and applies ``writes`` in the same transaction (``ModelTransactions``).
public struct ModelTransaction: Sendable {
    /// A change to the rows, in the order made.
    enum Write: Sendable, Equatable {
        /// A new version with its files; it also raises the model's last version number.
        case addVersion(ModelVersion)
        /// A version's `published` and `publishedAt`.
        case setPublished(ModelVersion)
        /// A version, its files and the patches to and from it.
        case deleteVersion(Int)
        /// The model with everything it has.
        case deleteModel
        /// The rollout, and its change for the audit log.
        case saveRollout(RolloutChange)
        /// The guarded rollouts, and whether one of them runs.
        case saveGuards([StoredRolloutGuard], hasWork: Bool)
        /// A declared metric, new or changed (a name recorded undeclared becomes declared).
        case declareMetric(ExperimentMetric)
        /// A metric's declaration (its data stays).
        case removeMetric(String)
    }

    /// A change to what the model's manifests say, made at `at` (a manifest version at least
    /// that late; `nil` for no floor).
    struct ManifestsChanged: Sendable, Equatable {
        let at: Date?
    }

    let name: ModelName
    /// The highest version number given (deleted versions' numbers are never given again).
    private(set) var lastVersionNumber: Int
    /// The versions, oldest first, with their files in upload order.
    private(set) var versions: [ModelVersion]
    private(set) var rollout: Rollout
    private(set) var guards: [StoredRolloutGuard]
    /// The names of the app metrics declared for the model.
    private(set) var declaredMetrics: Set<String>
    /// The names the app recorded without declaring them.
    private(set) var undeclaredMetrics: Set<String>
    private(set) var writes: [Write] = []
    private(set) var manifestsChanged: ManifestsChanged?

    init(
        name: ModelName, lastVersionNumber: Int, versions: [ModelVersion], rollout: Rollout, guards: [StoredRolloutGuard],
        declaredMetrics: Set<String>, undeclaredMetrics: Set<String> = []
    ) {
        self.name = name
        self.lastVersionNumber = lastVersionNumber
        self.versions = versions.sorted { $0.version < $1.version }
        self.rollout = rollout
        self.guards = guards
        self.declaredMetrics = declaredMetrics
        self.undeclaredMetrics = undeclaredMetrics
    }

    /// The numbers of the published versions.
    var published: Set<Int> { Set(versions.filter(\.published).map(\.version)) }

    /// - Throws: ``DepotError`` `not_found` when the model has no such version.
    func version(_ number: Int) throws -> ModelVersion {
        guard let version = versions.first(where: { $0.version == number }) else { throw CatalogRule.noVersion(number, of: name.rawValue) }
        return version
    }

    /// Adds version N+1 from `upload`.
    mutating func addVersion(_ upload: VerifiedUpload, publish: Bool, at date: Date) -> ModelVersion {
        lastVersionNumber += 1
        let version = ModelVersion(
            model: name, version: lastVersionNumber, sha256: upload.sha256, size: upload.size, notes: upload.notes,
            published: publish, createdAt: date, publishedAt: publish ? date : nil, tflite: upload.tflite, files: upload.files,
            uploadedBy: upload.uploadedBy)
        versions.append(version)
        record(.addVersion(version), manifestsAt: date)
        return version
    }

    /// Publishes a version (its `publishedAt` becomes `date`) or unpublishes it (its `publishedAt`
    /// stays); a version already so writes nothing.
    mutating func setPublished(_ published: Bool, version number: Int, at date: Date) throws -> ModelVersion {
        var version = try version(number)
        guard version.published != published, let index = versions.firstIndex(of: version) else { return version }
        version.published = published
        if published { version.publishedAt = date }
        versions[index] = version
        record(.setPublished(version), manifestsAt: date)
        return version
    }

    mutating func deleteVersion(_ number: Int) throws {
        _ = try version(number)
        versions.removeAll { $0.version == number }
        writes.append(.deleteVersion(number))
        manifestsChanged = ManifestsChanged(at: manifestsChanged?.at)
    }

    mutating func deleteModel() {
        versions = []
        writes.append(.deleteModel)
    }

    /// Saves the rollout (with an audit entry by `keyID` when it changed) and the guarded rollouts
    /// (when they changed); a changed rollout's entry carries the reason of the guards' newest move.
    mutating func save(rollout after: Rollout, guards newGuards: [StoredRolloutGuard], by keyID: String, at date: Date) {
        if newGuards != guards {
            writes.append(.saveGuards(newGuards, hasWork: newGuards.contains(where: \.rolloutGuard.hasWork)))
        }
        if after != rollout {
            let reason = StoredRolloutGuard.reasonOfNewMove(before: guards, after: newGuards)
            record(.saveRollout(RolloutChange(keyID: keyID, at: date, before: rollout, after: after, reason: reason)), manifestsAt: date)
            rollout = after
        }
        guards = newGuards
    }

    mutating func declare(_ metric: ExperimentMetric) {
        declaredMetrics.insert(metric.name)
        undeclaredMetrics.remove(metric.name)
        writes.append(.declareMetric(metric))
    }

    /// Forgets a metric's name, declared or recorded without a declaration (its rows stay).
    mutating func removeMetric(named metric: String) {
        declaredMetrics.remove(metric)
        undeclaredMetrics.remove(metric)
        writes.append(.removeMetric(metric))
    }

    private mutating func record(_ write: Write, manifestsAt date: Date) {
        writes.append(write)
        manifestsChanged = ManifestsChanged(at: max(date, manifestsChanged?.at ?? date))
    }
}
