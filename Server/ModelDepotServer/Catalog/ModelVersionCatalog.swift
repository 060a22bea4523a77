import Foundation
import ModelDepotShared

/// Models, their versions and the patches between them. One role of ``ModelCatalog``; every method
/// throws ``DepotError``. Deleting and adding versions and publishing are written once, below,
/// over ``ModelTransactions``.
public protocol ModelVersionCatalog: ModelTransactions {
    func createModel(_ creation: ModelCreation, at date: Date) async throws -> ModelSummary
    func models() async throws -> [ModelSummary]
    func model(_ name: ModelName) async throws -> ModelSummary
    func versions(of model: ModelName) async throws -> [ModelVersion]
    func version(_ number: Int, of model: ModelName) async throws -> ModelVersion
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

extension ModelVersionCatalog {
    /// Deletes a model; with versions only when `force` is set.
    /// - Returns: The digests no version references any more once the change is committed (see
    ///   ``ModelTransactions/write(model:_:)``).
    public func deleteModel(_ name: ModelName, force: Bool) async throws -> Set<String> {
        try await write(model: name) { model in
            guard model.versions.isEmpty || force else { throw CatalogRule.modelHasVersions(name, count: model.versions.count) }
            model.deleteModel()
        }.unreferenced
    }

    /// Adds version N+1 from a verified upload whose blob is stored already.
    public func addVersion(_ upload: VerifiedUpload, to name: ModelName, publish: Bool, at date: Date) async throws -> ModelVersion {
        try await write(model: name) { model in model.addVersion(upload, publish: publish, at: date) }.value
    }

    /// Publishes or unpublishes a version; a version the rollout hands out stays published.
    public func setPublished(_ published: Bool, version number: Int, of name: ModelName, at date: Date) async throws -> ModelVersion {
        try await write(model: name) { model in
            _ = try model.version(number)
            if !published { try CatalogRule.checkNotInRollout(model.rollout, version: number, of: name.rawValue, doing: "unpublish") }
            return try model.setPublished(published, version: number, at: date)
        }.value
    }

    /// Deletes a version the rollout does not hand out.
    /// - Returns: The digests no version references any more once the change is committed (see
    ///   ``ModelTransactions/write(model:_:)``).
    public func deleteVersion(_ number: Int, of name: ModelName) async throws -> Set<String> {
        try await write(model: name) { model in
            _ = try model.version(number)
            try CatalogRule.checkNotInRollout(model.rollout, version: number, of: name.rawValue, doing: "delete")
            try model.deleteVersion(number)
        }.unreferenced
    }
}
