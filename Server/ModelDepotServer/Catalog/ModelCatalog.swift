import Foundation
import ModelDepotShared

/// Stores models, their versions and access keys. Every method throws ``DepotError``.
public protocol ModelCatalog: Sendable {
    func createModel(_ creation: ModelCreation, at date: Date) async throws -> ModelSummary
    func models() async throws -> [ModelSummary]
    func model(_ name: ModelName) async throws -> ModelSummary
    /// Deletes a model; with versions only when `force` is set.
    /// - Returns: The digests no version references any more once the change is committed: the
    ///   caller removes those blobs (a crash before that leaves them to the next start's clean-up).
    func deleteModel(_ name: ModelName, force: Bool) async throws -> Set<String>

    /// Adds version N+1 from a verified upload whose blob is stored already.
    func addVersion(_ upload: VerifiedUpload, to model: ModelName, publish: Bool, at date: Date) async throws -> ModelVersion
    func versions(of model: ModelName) async throws -> [ModelVersion]
    func version(_ number: Int, of model: ModelName) async throws -> ModelVersion
    func setPublished(_ published: Bool, version number: Int, of model: ModelName, at date: Date) async throws -> ModelVersion
    /// Deletes a version.
    /// - Returns: The digests no version references any more once the change is committed (see
    ///   ``deleteModel(_:force:)``).
    func deleteVersion(_ number: Int, of model: ModelName) async throws -> Set<String>
    /// The newest published version, or `nil`.
    func newestPublishedVersion(of model: ModelName) async throws -> ModelVersion?
    /// Every digest some version references (as its model, a companion file or an offered patch),
    /// with its size and the models referencing it.
    func blobReferences() async throws -> [BlobReference]

    /// Every file of every published version, for planning patches.
    func publishedFiles() async throws -> [PublishedFile]
    /// Every patch made, offered or not, of every model.
    func patches() async throws -> [StoredPatch]
    /// The patches made to a version's files, offered or not.
    func patches(to version: Int, of model: ModelName) async throws -> [StoredPatch]
    /// Records a patch made (its blob, when offered, is stored already); the model's manifests
    /// get a new manifest version when it is offered.
    /// - Returns: `false` when the patch was recorded before, or one of its versions is gone.
    func addPatch(_ patch: StoredPatch) async throws -> Bool

    /// The model's rollout (empty until one is set).
    func rollout(of model: ModelName) async throws -> Rollout
    /// Applies `change` to the rollout and the guarded rollouts together in one transaction
    /// (`change` is also given the model's published versions): every version the rollout names
    /// must exist and be published; a changed rollout goes to the audit log with the key that
    /// changed it.
    func changeRolloutAndGuards(
        of model: ModelName, by keyID: String, at date: Date,
        _ change: @escaping @Sendable (Rollout, [StoredRolloutGuard], _ published: Set<Int>) throws -> (Rollout, [StoredRolloutGuard])
    )
        async throws -> (rollout: Rollout, guards: [StoredRolloutGuard])
    /// The model's guarded rollouts, one per rule ever guarded, oldest first.
    func rolloutGuards(of model: ModelName) async throws -> [StoredRolloutGuard]
    /// The models with a running guarded rollout.
    func modelsWithRunningGuards() async throws -> [ModelName]
    /// The model's rollout changes, oldest first.
    func rolloutHistory(of model: ModelName) async throws -> [RolloutChange]

    /// Adds counted usage (downloads are attributed to every version with that file) and the
    /// installations seen per arm and version, with the minute each was first seen (an
    /// installation already recorded there keeps its first minute).
    func recordUsage(_ counts: [UsageCounter.Key: Int], installations: [UsageCounter.Installation: Int]) async throws
    /// The model's usage from `minute` (minutes since 1970) on.
    func usage(of model: ModelName, sinceMinute minute: Int) async throws -> [UsageRow]
    /// Installations first seen from `minute` on, counted per arm and version.
    func installations(of model: ModelName, sinceMinute minute: Int) async throws -> [InstallationCount]

    /// Applies checked outcome batches together, each whole or not at all, with the answers
    /// applying them one by one in order would give, so that many devices' batches share one
    /// commit; PostgreSQL in transactions of at most
    /// ``PostgresModelCatalog/outcomeTransactionSize``, so that none nears its deadline. The
    /// commit does not wait for the disk (SQLite `synchronous=NORMAL`, PostgreSQL
    /// `synchronous_commit=off`, for this transaction alone): a power failure can lose the last
    /// moments of acknowledged batches.
    /// - Returns: Per batch, in order: `false` when a batch with its id was applied before
    ///   (nothing changes), `true` when applied, or why it was refused: `not_found` (no such
    ///   model), `invalid_events` (a version the model does not have, one undeclared metric too
    ///   many), `too_many_requests` (past the installation's hourly events), or the failure of
    ///   its transaction when another of PostgreSQL's was committed.
    /// - Throws: ``DepotError`` when the transaction itself fails (then no batch was applied).
    func recordOutcomes(_ batches: [(model: ModelName, batch: OutcomeBatchRecord)]) async throws -> [Result<Bool, DepotError>]
    /// The most outcome batches ``recordOutcomes(_:)`` commits in one transaction: the writer
    /// hands it no more at once, so that each batch is answered as soon as its own transaction
    /// has committed, not after the others of a larger group.
    var outcomesPerTransaction: Int { get }
    /// The model's outcome rows, per metric and arm, read in one pass (the rows are kept by
    /// installation, so a query per metric would read them all each time).
    func outcomes(of model: ModelName) async throws -> [String: [CountedArm: [OutcomeRow]]]
    /// The installations that reported each version, per arm, with the first hour each did.
    func exposures(of model: ModelName) async throws -> [CountedArm: [OutcomeExposure]]
    /// The app's metrics (declared ones, and names recorded without declaring, read as sums).
    func appMetrics(of model: ModelName) async throws -> [AppMetric]
    /// Declares a metric, or changes a declared one; at most ``ExperimentMetric/maximumDeclared``.
    func declareMetric(_ metric: ExperimentMetric, of model: ModelName) async throws
    /// Forgets a metric's declaration (its data stays); `not_found` when none is declared.
    func removeMetric(named name: String, of model: ModelName) async throws
    /// Forgets the batch ids and hourly event counts from before `hour`: a device does not send a
    /// batch again after ``OutcomeBatch/maximumAge``.
    func pruneOutcomeBatches(beforeHour hour: Int) async throws

    func createKey(_ key: AccessKey, secretHash: [UInt8]) async throws
    func keys() async throws -> [AccessKey]
    func key(id: String) async throws -> (key: AccessKey, secretHash: [UInt8])?
    /// Every key that is not revoked, with its secret's hash.
    func workingKeys() async throws -> [(key: AccessKey, secretHash: [UInt8])]
    func revokeKey(id: String, at date: Date) async throws -> AccessKey

    /// Stores a console session, and removes every session that began before `startedBefore` or
    /// was last used before `usedBefore` (ended by their lifetimes).
    func addSession(_ session: StoredSession, removingStartedBefore startedBefore: Date, usedBefore: Date) async throws
    /// The session stored under `id` (the SHA-256 of its cookie's value), or `nil`.
    func session(id: String) async throws -> StoredSession?
    /// Records that the session was used at `date`.
    func touchSession(id: String, at date: Date) async throws
    /// Removes the session stored under `id` (none there: nothing happens).
    func removeSession(id: String) async throws
    /// Removes every session of the key.
    func removeSessions(ofKey keyID: String) async throws

    /// The model's manifest version: every change to the model (created, a version added,
    /// published, unpublished or deleted, its rollout changed) raises it, in the same transaction,
    /// above every one handed out for its name (also before the model was deleted and created
    /// again) and to at least the change's time in milliseconds. Reading it changes nothing, so
    /// every replica signs the same state with the same version. `floor` applies only to a model
    /// with none recorded yet (one created before versions were kept per change).
    func manifestVersion(of model: ModelName, notBelow floor: Int) async throws -> Int
    /// Raises every model's manifest version to at least `floor` (the start's time in ms): after
    /// a database was restored from an older backup, devices still get versions above the ones
    /// they saw. Every replica re-signs the models it raised.
    func raiseManifestVersions(notBelow floor: Int) async throws
    /// The envelope of root document `version`, or `nil`.
    func rootDocument(version: Int) async throws -> Data?
    /// The newest root document's envelope, or `nil` before the first.
    func latestRootDocument() async throws -> Data?
    /// Stores root document `version`; a `conflict` when that version exists already.
    func addRootDocument(version: Int, envelope: Data, at date: Date) async throws
}

/// A console session as the catalog keeps it: never the cookie's value, only its SHA-256.
public struct StoredSession: Sendable, Hashable {
    public var id: String
    public var keyID: String
    public var startedAt: Date
    public var usedAt: Date
}

/// Counted usage of one version through one arm in one minute.
public struct UsageRow: Sendable, Hashable {
    public var version: Int
    public var arm: CountedArm
    public var kind: UsageKind
    public var minute: Int
    public var count: Int
}

/// Installations an arm handed a version to.
public struct InstallationCount: Sendable, Hashable {
    public var arm: CountedArm
    public var version: Int
    public var count: Int
}

/// A blob some versions reference: its size and their models.
public struct BlobReference: Sendable, Hashable {
    public var sha256: String
    public var size: Int
    public var models: [ModelName]
}

/// An uploaded file that passed hashing and TFLite verification, waiting to become a version.
public struct VerifiedUpload: Sendable {
    public var sha256: String
    public var size: Int
    public var notes: String
    public var tflite: TFLiteModelDescription
    /// The companion files, stored already.
    public var files: [CompanionFile]
    /// The id of the admin token that uploaded it.
    public var uploadedBy: String?

    public init(
        sha256: String, size: Int, notes: String, tflite: TFLiteModelDescription, files: [CompanionFile] = [],
        uploadedBy: String? = nil
    ) {
        self.sha256 = sha256
        self.size = size
        self.notes = notes
        self.tflite = tflite
        self.files = files
        self.uploadedBy = uploadedBy
    }
}

extension ModelCatalog {
    /// Applies `change` to the rollout alone (see ``changeRolloutAndGuards(of:by:at:_:)``).
    public func changeRollout(
        of model: ModelName, by keyID: String, at date: Date,
        _ change: @escaping @Sendable (Rollout) throws -> Rollout
    ) async throws -> Rollout {
        try await changeRolloutAndGuards(of: model, by: keyID, at: date) { rollout, guards, _ in (try change(rollout), guards) }.rollout
    }
}
