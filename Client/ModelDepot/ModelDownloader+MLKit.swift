import Foundation
import ModelDepotShared

/// A model hosted on a ModelDepot server, as ML Kit's `CustomRemoteModel` names one.
public struct RemoteModel: Sendable, Hashable {
    /// The model's name on the server.
    public let name: String

    /// Names a remote model.
    public init(name: String) { self.name = name }
}

/// A model bundled with the app, the last fallback of `.latestModel`.
public struct LocalModel: Sendable, Hashable {
    /// The bundled file.
    public let fileURL: URL

    /// Names a bundled model file.
    public init(fileURL: URL) { self.fileURL = fileURL }
}

extension ModelDownloader {
    /// Starts downloading a model and returns its progress, as ML Kit's `ModelManager.download`:
    /// fractions as bytes arrive (by range), finished when the model is installed or up to date,
    /// cancelled when the download fails (the failure is also posted as `modelDownloadDidFail`).
    public func download(_ model: RemoteModel, conditions: DownloadConditions = DownloadConditions()) -> Progress {
        let progress = Progress(totalUnitCount: 1)
        guard let name = try? ModelName(model.name) else {
            progress.cancel()
            return progress
        }
        track(progress, for: name)
        Task { _ = try? await self.model(named: model.name, conditions: conditions) }
        return progress
    }

    /// Whether a verified version of the model is on the device.
    public func isModelDownloaded(_ model: RemoteModel) -> Bool {
        latestModelFilePath(model.name) != nil
    }

    /// The newest verified file of the model, or `nil`.
    public func latestModelFilePath(_ model: RemoteModel) -> URL? {
        latestModelFilePath(model.name)
    }

    /// Deletes every downloaded version of the model.
    public func deleteDownloadedModel(_ model: RemoteModel) throws {
        try deleteDownloadedModel(model.name)
    }

    /// The model to use, falling back to a bundled file when the server cannot be reached and
    /// nothing is downloaded yet; the bundled file is verified like a download (TFLite structure).
    /// - Throws: `DepotError` as ``model(named:policy:conditions:expectation:)``; a bundled
    ///   file that fails verification throws its verification error.
    public func model(
        named name: String, conditions: DownloadConditions = DownloadConditions(),
        expectation: TFLiteIOExpectation? = nil, fallback: LocalModel
    ) async throws -> VerifiedModel {
        do {
            return try await model(named: name, policy: .latestModel, conditions: conditions, expectation: expectation)
        } catch let error as DepotError where error.code == .unavailable {
            return try VerifiedModel.verifyBundled(
                fallback.fileURL, name: try ModelName(name), expectation: expectation,
                policy: configuration.verificationPolicy)
        }
    }
}
