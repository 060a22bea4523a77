import Foundation
import ModelDepotShared

/// What a ``ModelDownloader`` is doing, in order, for progress screens and logs.
///
/// A struct with a ``Kind`` rather than an enum, so that a kind of event added later does not
/// break an app's build: `switch event.kind` needs a `default:`, and each kind's values are
/// properties that are `nil` where they do not apply.
///
/// ```swift
/// for await event in await downloader.events() {
///     switch event.kind {
///     case .downloading: progressView.progress = Float(event.bytes ?? 0) / Float(max(event.total ?? 1, 1))
///     case .installed: print("v\(event.version ?? 0) in use")
///     case .failed: print(event.error?.message ?? "")
///     default: break
///     }
/// }
/// ```
public struct ModelDownloadEvent: Sendable, Hashable, CustomStringConvertible {
    /// What kind of step an event reports.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        /// The kind's name, as ``description`` prints it.
        public let name: String

        private init(_ name: String) { self.name = name }

        /// Asking the server for the model's manifest.
        public static let checking = Kind("checking")
        /// The model in use is the newest for this device.
        public static let upToDate = Kind("upToDate")
        /// Bytes of the new version on the device so far (``bytes``), out of its size (``total``),
        /// resumed bytes included.
        public static let downloading = Kind("downloading")
        /// The new version's files are on the device: ``patched`` counts those made by applying
        /// a patch to a file the device holds (0: all downloaded whole); ``fetched`` is the bytes
        /// downloaded for them this time (a patch that turned out bad included), ``saved`` the
        /// bytes not downloaded thanks to what the device held.
        public static let downloaded = Kind("downloaded")
        /// Checking size, SHA-256 and TFLite structure.
        public static let verifying = Kind("verifying")
        /// The new version is verified and in use.
        public static let installed = Kind("installed")
        /// The check or download failed (``error``); the current model, if any, stays in use.
        public static let failed = Kind("failed")

        public var description: String { name }
    }

    /// What happened.
    public var kind: Kind
    /// The model concerned.
    public var model: ModelName
    /// The version concerned; `nil` for `checking` and `failed`.
    public var version: Int?
    /// `downloading`: the bytes on the device so far.
    public var bytes: Int?
    /// `downloading`: the version's size.
    public var total: Int?
    /// `downloaded`: files made by patch.
    public var patched: Int?
    /// `downloaded`: bytes downloaded this time.
    public var fetched: Int?
    /// `downloaded`: bytes spared by patches and files held.
    public var saved: Int?
    /// `failed`: why.
    public var error: DepotError?

    private init(_ kind: Kind, _ model: ModelName, version: Int? = nil) {
        self.kind = kind
        self.model = model
        self.version = version
    }

    /// Asking the server for `model`'s manifest.
    public static func checking(model: ModelName) -> ModelDownloadEvent { ModelDownloadEvent(.checking, model) }

    /// `version` of `model` is the newest for this device.
    public static func upToDate(model: ModelName, version: Int) -> ModelDownloadEvent {
        ModelDownloadEvent(.upToDate, model, version: version)
    }

    /// `bytes` of `total` are on the device.
    public static func downloading(model: ModelName, version: Int, bytes: Int, total: Int) -> ModelDownloadEvent {
        var event = ModelDownloadEvent(.downloading, model, version: version)
        (event.bytes, event.total) = (bytes, total)
        return event
    }

    /// The version's files are on the device.
    public static func downloaded(model: ModelName, version: Int, patched: Int, fetched: Int, saved: Int) -> ModelDownloadEvent {
        var event = ModelDownloadEvent(.downloaded, model, version: version)
        (event.patched, event.fetched, event.saved) = (patched, fetched, saved)
        return event
    }

    /// Checking the version's files.
    public static func verifying(model: ModelName, version: Int) -> ModelDownloadEvent {
        ModelDownloadEvent(.verifying, model, version: version)
    }

    /// The version is verified and in use.
    public static func installed(model: ModelName, version: Int) -> ModelDownloadEvent {
        ModelDownloadEvent(.installed, model, version: version)
    }

    /// The check or download failed.
    public static func failed(model: ModelName, error: DepotError) -> ModelDownloadEvent {
        var event = ModelDownloadEvent(.failed, model)
        event.error = error
        return event
    }

    public var description: String {
        let details = [
            version.map { "v\($0)" }, bytes.map { "\($0)/\(total ?? 0) bytes" },
            patched.map { "patched \($0), fetched \(fetched ?? 0), saved \(saved ?? 0)" }, error.map(\.description),
        ]
        return ([kind.name, model.rawValue] + details.compactMap { $0 }).joined(separator: " ")
    }
}

extension Notification.Name {
    /// Posted when a new version is installed; `userInfo[ModelDownloader.modelKey]` is the ``VerifiedModel``.
    public static let modelDownloadDidSucceed = Notification.Name("ModelDepotModelDownloadDidSucceed")
    /// Posted when a check or download fails; `userInfo` holds ``ModelDownloader/modelNameKey`` and ``ModelDownloader/errorKey``.
    public static let modelDownloadDidFail = Notification.Name("ModelDepotModelDownloadDidFail")
}
