import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A download session the system runs outside the app's process: on iOS a background
/// `URLSession` (`URLBackgroundDownloadSession`), whose transfers go on while the app is
/// suspended, and after the system terminated it, and which relaunches the app in the background
/// to hand over what finished. Set one as ``ModelDownloaderConfiguration/backgroundSession`` and
/// downloads whose conditions allow background downloading go through it.
///
/// A session only starts tasks and reports their ends to ``BackgroundDownloads``, which decides
/// everything else (which model and range a task is for, whether what arrived is what was asked
/// for, when it joins the partial download) the same way on every platform.
public protocol BackgroundDownloadSession: AnyObject, Sendable {
    /// The session's identifier: what `application(_:handleEventsForBackgroundURLSession:completionHandler:)` names.
    var identifier: String { get }
    /// Connects the session to the downloads it reports to: done by ``ModelDownloader``'s init,
    /// before any task starts. Keep the reference weak (the downloads keep the session).
    func connect(_ downloads: BackgroundDownloads)
    /// Starts a download task for `request` with `description` as its `taskDescription`; its end
    /// goes to ``BackgroundDownloads/finished(task:file:response:)`` or
    /// ``BackgroundDownloads/failed(task:error:)``.
    func startDownload(_ request: URLRequest, description: String)
    /// The `taskDescription`s of the tasks still under way, including those the system kept across
    /// a relaunch.
    func runningTaskDescriptions() async -> Set<String>
}
