import Foundation
import ModelDepotShared

/// Models, their versions and the patches between them. One role of ``ModelCatalog``; every method
/// throws ``DepotError``.
public protocol ModelVersionCatalog: Sendable {
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
}
