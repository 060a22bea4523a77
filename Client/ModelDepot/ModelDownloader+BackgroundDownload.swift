import Foundation
import ModelDepotShared

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension ModelDownloader {
    /// Hands the SDK what the system relaunched the app for: call it from the app delegate's
    /// `application(_:handleEventsForBackgroundURLSession:completionHandler:)`, on a downloader
    /// created at launch with the same ``ModelDownloaderConfiguration/backgroundSession``.
    ///
    /// ```swift
    /// func application(_ application: UIApplication, handleEventsForBackgroundURLSession identifier: String,
    ///                  completionHandler: @escaping () -> Void) {
    ///     _ = downloader.handleEventsForBackgroundURLSession(identifier: identifier, completionHandler: completionHandler)
    /// }
    /// ```
    ///
    /// The session's finished downloads are kept beside their partial files as they are
    /// delivered; `completionHandler` is called on the main actor once the system delivered them
    /// all. They are checked, verified and installed the next time the app asks for the model
    /// (``model(named:policy:conditions:expectation:)`` or ``performBackgroundRefresh(models:conditions:)``).
    /// - Returns: `false`, leaving `completionHandler` alone, when `identifier` is not this
    ///   downloader's background session.
    public nonisolated func handleEventsForBackgroundURLSession(
        identifier: String,
        completionHandler: @escaping @MainActor () -> Void
    ) -> Bool {
        guard let backgroundDownloads, backgroundDownloads.session.identifier == identifier else { return false }
        backgroundDownloads.whenEventsDelivered(completionHandler)
        return true
    }

    /// The range through the background session. The system follows redirects there by itself, so
    /// where the answer came from is judged once it is in: the server's origin or an allowed one,
    /// never from `https` to `http`; otherwise the bytes are discarded unread.
    func backgroundRange(
        _ range: ClosedRange<Int>, of manifest: ModelManifest, from url: URL, network: NetworkAccess,
        through downloads: BackgroundDownloads
    ) async throws -> (URL, HTTPURLResponse) {
        let what = "The background download of '\(manifest.model)' v\(manifest.version)"
        let request = rangeRequest(range, of: manifest, to: url).allowing(network)
        let body: URL, response: HTTPURLResponse
        do {
            (body, response) = try await downloads.download(request, sha256: manifest.sha256, size: manifest.size, range: range)
        } catch let error as CancellationError {
            throw error
        } catch {
            throw DepotError(
                .unavailable, "\(what) was interrupted: \(error.localizedDescription). It resumes from byte \(range.lowerBound) next time.")
        }
        do {
            try checkRedirect(from: url, to: response.url ?? url, what: what, otherwise: "its bytes were discarded")
        } catch {
            try? FileManager.default.removeItem(at: body)
            throw error
        }
        return (body, response)
    }
}
