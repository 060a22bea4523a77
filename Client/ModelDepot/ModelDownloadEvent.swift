import Foundation
import ModelDepotShared

/// What a ``ModelDownloader`` is doing, in order, for progress screens and logs.
public enum ModelDownloadEvent: Sendable, Hashable {
    /// Asking the server for the model's manifest.
    case checking(model: ModelName)
    /// The model in use is the newest for this device.
    case upToDate(model: ModelName, version: Int)
    /// Bytes of the new version on the device so far, out of its size (resumed bytes included).
    case downloading(model: ModelName, version: Int, bytes: Int, total: Int)
    /// The new version's files are on the device: `patched` counts those made by applying a
    /// patch to a file of a version the device holds (0: all downloaded whole); `fetched` is
    /// the bytes downloaded for them this time (a patch that turned out bad included), `saved`
    /// the bytes not downloaded thanks to what the device held: the files patches made, less the
    /// patches, and files the version shares with one the device holds (copied, not fetched).
    case downloaded(model: ModelName, version: Int, patched: Int, fetched: Int, saved: Int)
    /// Checking size, SHA-256 and TFLite structure.
    case verifying(model: ModelName, version: Int)
    /// The new version is verified and in use.
    case installed(model: ModelName, version: Int)
    /// The check or download failed; the current model, if any, stays in use.
    case failed(model: ModelName, error: DepotError)
}

extension Notification.Name {
    /// Posted when a new version is installed; `userInfo[ModelDownloader.modelKey]` is the ``VerifiedModel``.
    public static let modelDownloadDidSucceed = Notification.Name("ModelDepotModelDownloadDidSucceed")
    /// Posted when a check or download fails; `userInfo` holds ``ModelDownloader/modelNameKey`` and ``ModelDownloader/errorKey``.
    public static let modelDownloadDidFail = Notification.Name("ModelDepotModelDownloadDidFail")
}
