import Foundation
import ModelDepotShared

/// What ``ModelDownloader/performBackgroundRefresh(models:conditions:)`` did in the time it had.
public struct BackgroundRefreshResult: Sendable, Hashable {
    /// Models whose new version was downloaded, verified and installed.
    public var installed: [String] = []
    /// Models already at the version the server names.
    public var upToDate: [String] = []
    /// Models whose check or download failed, with why; what they had stays in use.
    public var failed: [String: DepotError] = [:]
    /// Outcome events the server applied.
    public var outcomesSent = 0
    /// Why the queued outcomes were not sent, if they were not; they stay queued.
    public var outcomeFailure: DepotError?
    /// Whether every model was checked and outcomes sent before the work was cancelled (the
    /// system's time ran out): what to pass to `BGTask.setTaskCompleted(success:)`.
    public var finished = false

    /// An empty result.
    public init() {}
}

extension ModelDownloader {
    /// What an app's `BGAppRefreshTask` or `BGProcessingTask` runs: checks each model, downloads
    /// what changed under `conditions` (background downloading allowed: the system woke the app
    /// for this), and sends the queued outcomes. Cancel the task that calls it from the task's
    /// `expirationHandler`: the download in progress stops with its bytes kept for next time, and
    /// the result says what was done.
    ///
    /// ```swift
    /// BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.models", using: nil) { task in
    ///     let work = Task {
    ///         let result = await downloader.performBackgroundRefresh(models: ["flowers"])
    ///         task.setTaskCompleted(success: result.finished)
    ///     }
    ///     task.expirationHandler = { work.cancel() }
    /// }
    /// ```
    /// - Parameters:
    ///   - models: The models' names.
    ///   - conditions: When a download may happen; `allowsBackgroundDownloading` is taken as true.
    /// - Returns: What was installed, confirmed, failed and sent, and whether it all got done.
    public func performBackgroundRefresh(models: [String], conditions: DownloadConditions = DownloadConditions()) async
        -> BackgroundRefreshResult
    {
        var conditions = conditions
        conditions.allowsBackgroundDownloading = true
        var result = BackgroundRefreshResult()
        for name in models {
            guard !Task.isCancelled else { return result }
            let before = (try? ModelName(name)).flatMap { try? cache.current($0)?.model }
            do {
                let model = try await model(named: name, policy: .latestModel, conditions: conditions)
                if let failure = model.checkFailure {
                    result.failed[name] = failure
                } else if model.version == before?.version, model.sha256 == before?.sha256 {
                    result.upToDate.append(name)
                } else {
                    result.installed.append(name)
                }
            } catch is CancellationError {
                return result
            } catch {
                result.failed[name] = error as? DepotError ?? DepotError(.unavailable, "\(error)")
            }
        }
        guard !Task.isCancelled else { return result }
        do {
            result.outcomesSent = try await sendOutcomes(conditions: conditions)
        } catch {
            result.outcomeFailure = error
        }
        result.finished = !Task.isCancelled
        return result
    }
}
