import Foundation
import ModelDepotShared

/// What manifests are signed with: each model's manifest version and the root documents. One role
/// of ``ModelCatalog``; every method throws ``DepotError``.
public protocol SigningCatalog: Sendable {
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
