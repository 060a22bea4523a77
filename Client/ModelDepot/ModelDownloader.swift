import Foundation
import ModelDepotShared

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Downloads models from a ModelDepot server, verifies them on the device and keeps them:
/// conditional manifest checks (`If-None-Match`), resumable downloads (`Range` + `If-Range`
/// into a partial file that survives restarts), verification before install, and atomic
/// install next to the model's metadata. A failed, partial or tampered download leaves the
/// current model in place.
///
/// ```swift
/// let downloader = try ModelDownloader(configuration: .init(
///     serverURL: URL(string: "https://models.example.com")!, appKey: appKey, cacheDirectory: caches))
/// let model = try await downloader.model(named: "flowers")
/// print(model.fileURL, model.version)
/// ```
public actor ModelDownloader {
    let configuration: ModelDownloaderConfiguration
    /// What manifest checks say of the device: the configuration's ``ModelDownloaderConfiguration/device``,
    /// with what it leaves unset filled in (platform, OS, app and SDK versions).
    let device: DeviceContext
    let cache: ModelCache
    let trust: TrustStore
    /// The background session's downloads, when the configuration names a session.
    nonisolated let backgroundDownloads: BackgroundDownloads?
    /// The newest root document verified so far (also stored by ``trust``).
    var trustedRoot: TrustedRoot?
    /// The installation id sent for rollouts.
    public nonisolated let installationID: String
    /// Model-health outcomes and the app's metrics, queued for the server (``sendOutcomes(conditions:)``).
    public nonisolated let outcomes: OutcomeRecorder
    /// When a check next sends outcomes by itself, and the wait after the next failure to send.
    var outcomeSchedule: (due: Date, backoff: Duration)
    /// The latest send a check started by itself.
    var backgroundOutcomeSend: Task<Void, Never>?
    private var inFlight: [ModelName: Task<VerifiedModel, any Error>] = [:]
    private var subscribers: [UUID: AsyncStream<ModelDownloadEvent>.Continuation] = [:]
    private var progresses: [ModelName: [Progress]] = [:]

    /// `userInfo` key of the installed ``VerifiedModel`` in `modelDownloadDidSucceed`.
    public static let modelKey = "model"
    /// `userInfo` key of the model's name (a `String`) in `modelDownloadDidFail`.
    public static let modelNameKey = "modelName"
    /// `userInfo` key of the `DepotError` in `modelDownloadDidFail`.
    public static let errorKey = "error"

    /// Creates a downloader; creates the cache and state directories (see
    /// ``ModelDownloaderConfiguration/stateDirectory``) and, unless the configuration gives one,
    /// a random installation id persisted in the state directory.
    /// - Throws: `DepotError`: `file_unreadable` when a directory cannot be created;
    ///   `storage_unreadable` when the installation id or the background downloads' ledger
    ///   exists but cannot be read (before the first unlock), rather than making a new id that
    ///   would move the device to another bucket.
    public init(configuration: ModelDownloaderConfiguration) throws {
        self.configuration = configuration
        device = configuration.device.filling(from: .automatic())
        let storage = configuration.storage
        cache = ModelCache(root: storage.cache, verificationPolicy: configuration.verificationPolicy)
        trust = TrustStore(stateDirectory: storage.state, pinned: configuration.trustedRoot)
        do {
            try storage.prepare()
        } catch {
            throw DepotError(
                .fileUnreadable,
                "Could not create the model cache at \(storage.cache.path) and its state at \(storage.state.path): \(error.localizedDescription)."
            )
        }
        backgroundDownloads = try configuration.backgroundSession.map { session throws(DepotError) in
            try BackgroundDownloads(
                session: session, stateDirectory: storage.state, staging: storage.cache.appendingPathComponent("partial"))
        }
        if let backgroundDownloads { backgroundDownloads.session.connect(backgroundDownloads) }
        installationID = try configuration.installationID?.lowercased() ?? Self.persistedInstallationID(in: storage.state)
        outcomes = OutcomeRecorder(directory: storage.state, enabled: configuration.recordsOutcomes, clock: configuration.clock)
        outcomeSchedule = (
            configuration.clock().addingTimeInterval(configuration.outcomeSendInterval.seconds), OutcomeSchedule.firstBackoff
        )
    }

    /// The verified model to use.
    /// - Parameters:
    ///   - name: The model's name.
    ///   - policy: `.latestModel` asks the server (falling back to the downloaded model when it
    ///     cannot be reached); `.localModel` uses only what is downloaded.
    ///   - conditions: When a download may happen; checks of the manifest ignore them.
    ///   - expectation: Inputs and outputs the app requires; a model without them is rejected.
    /// - Returns: The verified model.
    /// - Throws: `DepotError`: `not_found`, `unavailable` (no network and nothing downloaded),
    ///   `conditions_not_met`, `not_enough_space`, `size_mismatch`, `digest_mismatch`, a TFLite
    ///   verification code, or the server's error.
    public func model(
        named name: String, policy: DownloadPolicy = .latestModel, conditions: DownloadConditions = DownloadConditions(),
        expectation: TFLiteIOExpectation? = nil
    ) async throws -> VerifiedModel {
        let model = try ModelName(name)
        // A downloaded model that lacks the expected inputs and outputs (installed for another
        // app version, say) is not used; the server is asked for one that has them.
        let current = try cache.current(model).flatMap { current in
            guard let expectation else { return current }
            return (try? expectation.check(current.model.description)) == nil ? nil : current
        }
        switch policy {
        case .localModel:
            guard let installed = try cache.current(model) else {
                throw DepotError(.notFound, "No model '\(model)' has been downloaded yet; download it with the latestModel policy first.")
            }
            try expectation?.check(installed.model.description)
            return installed.model
        case .localModelUpdateInBackground:
            guard let current else { break }
            _ = refresh(model, current: current, conditions: conditions, expectation: expectation)
            return current.model
        case .latestModel:
            break
        }
        let task = refresh(model, current: current, conditions: conditions, expectation: expectation)
        // Cancelling the caller cancels the check or download (shared with concurrent callers of
        // the same model); what was downloaded so far stays in the partial file for next time.
        let verified = try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
        // A caller that joined another's check gets its result only if it has what this caller expects.
        try expectation?.check(verified.description)
        return verified
    }

    /// Events from now on, in order, until the stream is dropped.
    public func events() -> AsyncStream<ModelDownloadEvent> {
        let (stream, continuation) = AsyncStream<ModelDownloadEvent>.makeStream()
        let id = UUID()
        subscribers[id] = continuation
        continuation.onTermination = { _ in Task { await self.unsubscribe(id) } }
        return stream
    }

    private func unsubscribe(_ id: UUID) { subscribers[id] = nil }

    /// Sends an event to every subscriber and moves the `Progress` objects following its model,
    /// on the main actor (where an app's progress views observe them).
    func emit(_ event: ModelDownloadEvent) async {
        for continuation in subscribers.values { continuation.yield(event) }
        await updateProgress(event)
    }

    /// Follows a model's next check or download with a `Progress`.
    func track(_ progress: Progress, for model: ModelName) {
        progresses[model, default: []].append(progress)
    }

    private func updateProgress(_ event: ModelDownloadEvent) async {
        let model = event.model
        switch event.kind {
        case .downloading:
            guard let following = progresses[model], let bytes = event.bytes, let total = event.total else { return }
            await MainActor.run {
                for progress in following {
                    progress.totalUnitCount = Int64(max(total, 1))
                    progress.completedUnitCount = Int64(bytes)
                }
            }
        case .installed, .upToDate:
            guard let following = progresses.removeValue(forKey: model) else { return }
            await MainActor.run {
                for progress in following { progress.completedUnitCount = progress.totalUnitCount }
            }
        case .failed:
            guard let following = progresses.removeValue(forKey: model) else { return }
            await MainActor.run {
                for progress in following { progress.cancel() }
            }
        default:
            break
        }
    }

    /// Starts (or joins) the one check-and-download of a model.
    private func refresh(
        _ model: ModelName, current: (model: VerifiedModel, cached: ModelCache.Current)?,
        conditions: DownloadConditions, expectation: TFLiteIOExpectation?
    ) -> Task<VerifiedModel, any Error> {
        if let task = inFlight[model] { return task }
        let task = Task {
            defer {
                inFlight[model] = nil
                sendOutcomesIfDue()
            }
            do {
                return try await update(model, current: current, conditions: conditions, expectation: expectation)
            } catch is CancellationError {
                await emit(.failed(model: model, error: DepotError(.cancelled, "The check or download of '\(model)' was cancelled.")))
                throw CancellationError()
            } catch {
                let failure = error as? DepotError ?? DepotError(.unavailable, "\(error)")
                await report(failure, for: model)
                throw failure
            }
        }
        inFlight[model] = task
        return task
    }

    /// A failed check or download: a `failed` event and the failure notification.
    private func report(_ failure: DepotError, for model: ModelName) async {
        await emit(.failed(model: model, error: failure))
        await post(.modelDownloadDidFail, [Self.modelNameKey: model.rawValue, Self.errorKey: failure])
    }

    /// Posts a notification on the main actor, as UIKit's own are, so an observer may update the
    /// interface; the check that posts it goes on once it is posted.
    private func post(_ name: Notification.Name, _ userInfo: [String: any Sendable]) async {
        let center = configuration.notificationCenter
        await MainActor.run { center.post(name: name, object: self, userInfo: userInfo) }
    }

    /// The current model after a check that could not confirm it (no network, a server error):
    /// it stays in use, and the failure is reported (event, notification) and carried by the
    /// returned model, as `manifest_expired` once its manifest has expired.
    private func unconfirmed(_ current: VerifiedModel, because cause: DepotError) async -> VerifiedModel {
        let failure: DepotError
        if current.expires.addingTimeInterval(configuration.clockSkew) <= configuration.clock() {
            failure = DepotError(
                .manifestExpired,
                "The manifest of '\(current.name)' v\(current.version) expired at \(current.expires) and was not renewed: \(cause.message) The current model (v\(current.version)) stays in use, unconfirmed since \(current.confirmedAt.map { "\($0)" } ?? "it was installed")."
            )
        } else {
            failure = DepotError(cause.code, "\(cause.message) \(Self.kept(current))")
        }
        await report(failure, for: current.name)
        var returned = current
        returned.checkFailure = failure
        return returned
    }

    /// Limits for a transfer of at most `maximumBytes`, or of what `body` allows for its answer.
    func limits(maximumBytes: Int) -> TransferLimits {
        TransferLimits(maximumBytes: maximumBytes, stallTimeout: configuration.stallTimeout, minimumRate: configuration.minimumTransferRate)
    }

    func limits(body: @escaping @Sendable (HTTPURLResponse) throws -> Int) -> TransferLimits {
        TransferLimits(stallTimeout: configuration.stallTimeout, minimumRate: configuration.minimumTransferRate, body: body)
    }

    /// The newest verified file of a model, or `nil`.
    public func latestModelFilePath(_ name: String) -> URL? {
        (try? ModelName(name)).flatMap { try? cache.current($0)?.model.fileURL }
    }

    /// Every model with a verified version on the device.
    public func listDownloadedModels() -> [VerifiedModel] { cache.models() }

    /// Deletes every downloaded version of a model.
    public func deleteDownloadedModel(_ name: String) throws {
        try cache.delete(try ModelName(name))
    }

    private func update(
        _ model: ModelName, current: (model: VerifiedModel, cached: ModelCache.Current)?,
        conditions: DownloadConditions, expectation: TFLiteIOExpectation?
    ) async throws -> VerifiedModel {
        await emit(.checking(model: model))
        let kept = Self.kept(current?.model)
        let fetched: (Data, HTTPURLResponse)
        do {
            fetched = try await configuration.transport.data(
                for: manifestRequest(
                    model, etag: current?.cached.etag, exposure: current.flatMap { outcomes.exposure(for: $0.model.manifest) }),
                limits: limits(maximumBytes: ModelManifest.maximumSize))
        } catch is TransferLimitExceeded {
            throw DepotError(
                .metadataTooLarge, "The manifest of '\(model)' is larger than \(ModelManifest.maximumSize) bytes; it was not read. \(kept)")
        } catch {
            try Task.checkCancellation()
            let cause = "Could not reach \(configuration.serverURL.absoluteString): \(Self.describe(error))."
            if let current { return await unconfirmed(current.model, because: DepotError(.unavailable, cause)) }
            throw DepotError(.unavailable, "\(cause) No model '\(model)' is downloaded yet.")
        }
        let (data, response) = fetched
        if response.statusCode == 304, let current {
            guard current.model.expires.addingTimeInterval(configuration.clockSkew) > configuration.clock() else {
                throw DepotError(
                    .manifestExpired,
                    "The server answers that the manifest of '\(model)' is unchanged, but it expired at \(current.model.expires): the server stopped refreshing it, or its answer is being replayed. \(kept)"
                )
            }
            keepExposure(response, manifest: current.model.manifest)
            let confirmed = try? cache.confirm(model, current.cached, at: configuration.clock())
            await emit(.upToDate(model: model, version: current.model.version))
            return confirmed ?? current.model
        }
        guard response.statusCode == 200 else {
            let error = Self.serverError(data, response)
            if let current, [.unavailable, .internalError].contains(error.code) { return await unconfirmed(current.model, because: error) }
            throw error
        }
        var manifest: ModelManifest
        do {
            manifest = try await verifiedManifest(data, response, for: model)
        } catch let error as DepotError {
            throw DepotError(error.code, "\(error.message) \(kept)")
        }
        keepExposure(response, manifest: manifest)
        var etag = response.value(forHTTPHeaderField: "ETag")
        if let current, current.model.sha256 == manifest.sha256, current.model.version == manifest.version {
            let confirmed = try? cache.confirm(
                model, .init(directory: current.cached.directory, etag: etag, expires: manifest.expires),
                at: configuration.clock())
            await emit(.upToDate(model: model, version: current.model.version))
            return confirmed ?? current.model
        }
        var file: URL
        var companions: [String: URL]
        let held = cache.heldFiles(model)
        var transfer = Transfer()
        do {
            do {
                file = try await fetch(manifest, patches: manifest.patches, held: held, conditions: conditions, transfer: &transfer)
                companions = try await downloadCompanions(manifest, held: held, conditions: conditions, transfer: &transfer)
            } catch let error as DepotError where [.notFound, .forbidden].contains(error.code) {
                // The download URL expired or the blob went away: ask again which version to use.
                let (data, response) = try await configuration.transport.data(
                    for: manifestRequest(model, etag: nil, exposure: nil),
                    limits: limits(maximumBytes: ModelManifest.maximumSize))
                guard response.statusCode == 200 else { throw Self.serverError(data, response) }
                manifest = try await verifiedManifest(data, response, for: model)
                keepExposure(response, manifest: manifest)
                etag = response.value(forHTTPHeaderField: "ETag")
                file = try await fetch(manifest, patches: manifest.patches, held: held, conditions: conditions, transfer: &transfer)
                companions = try await downloadCompanions(manifest, held: held, conditions: conditions, transfer: &transfer)
            }
        } catch let error as DepotError {
            if error.code != .cancelled, error.code != .conditionsNotMet {
                outcomes.record(.downloadFailed, code: error.code, manifest: manifest)
            }
            throw DepotError(error.code, "\(error.message) \(kept)")
        }
        outcomes.record(.downloadFinished, manifest: manifest)
        await emit(
            .downloaded(
                model: model, version: manifest.version, patched: transfer.patched, fetched: transfer.fetched, saved: transfer.saved))
        await emit(.verifying(model: model, version: manifest.version))
        let verified: VerifiedModel
        do throws(DepotError) {
            verified = try await VerifiedModel.verifyDownload(
                file, companions: companions, against: manifest, expectation: expectation,
                policy: configuration.verificationPolicy)
        } catch {
            try? FileManager.default.removeItem(at: file)
            for companion in companions.values { try? FileManager.default.removeItem(at: companion) }
            outcomes.record(.verificationRefused, code: error.code, manifest: manifest)
            throw DepotError(error.code, "\(error.message) The download was discarded. \(kept)")
        }
        let installed = try cache.install(
            file, companions: companions, manifest: manifest, description: verified.description, etag: etag,
            confirmedAt: configuration.clock(), kept: configuration.keptVersions)
        outcomes.record(.installed, manifest: manifest)
        await emit(.installed(model: model, version: installed.version))
        await post(.modelDownloadDidSucceed, [Self.modelKey: installed])
        return installed
    }

    /// Keeps the answer's exposure token for `manifest`'s version and arm (``OutcomeRecorder``).
    private func keepExposure(_ response: HTTPURLResponse, manifest: ModelManifest) {
        if let token = response.value(forHTTPHeaderField: DepotHeader.exposure) { outcomes.expose(token, manifest: manifest) }
    }

    /// - Parameter exposure: The token held for the version and arm `etag` names: a `304` then
    ///   brings a new one only when the held one is from another day.
    private func manifestRequest(_ model: ModelName, etag: String?, exposure: String?) -> URLRequest {
        var request = URLRequest(url: configuration.serverURL.appendingPathComponent(String(DeviceRoute.manifest(of: model).dropFirst())))
        let headers: [(String, String?)] = [
            ("Authorization", "Bearer \(configuration.appKey)"), (DepotHeader.installationID, installationID),
            (DepotHeader.platform, device.platform), (DepotHeader.appVersion, device.appVersion), (DepotHeader.osVersion, device.osVersion),
            (DepotHeader.sdkVersion, device.sdkVersion), (DepotHeader.country, device.country), ("If-None-Match", etag),
            (DepotHeader.attributes, DeviceAttributes.encode(device.attributes)), (DepotHeader.exposure, exposure),
        ]
        for case let (name, value?) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    /// The end of every failure's message: what the app keeps using.
    static func kept(_ current: VerifiedModel?) -> String {
        current.map { "The current model (v\($0.version)) stays in use." } ?? "No model is installed yet."
    }

    /// What went wrong with a transfer, in words.
    static func describe(_ error: any Error) -> String {
        switch error {
        case let stalled as TransferStalled: "no byte arrived for \(stalled.timeout) (stallTimeout)"
        case let slow as TransferTooSlow:
            "\(slow.receivedInWindow) bytes arrived in \(slow.minimum.window), below \(slow.minimum.bytesPerSecond) bytes/s (minimumTransferRate)"
        default: error.localizedDescription
        }
    }

    static func serverError(_ data: Data, _ response: HTTPURLResponse) -> DepotError {
        (try? JSONDecoder().decode(ErrorBody.self, from: data))?.error
            ?? DepotError(response.statusCode >= 500 ? .unavailable : .badRequest, "The server answered \(response.statusCode).")
    }

    private static func persistedInstallationID(in directory: URL) throws(DepotError) -> String {
        let file = directory.appendingPathComponent("installation-id")
        if let data = try StoredFile.contents(of: file), let id = String(data: data, encoding: .utf8), !id.isEmpty {
            return id
        }
        let id = UUID().uuidString.lowercased()
        try? StoredFile.write(Data(id.utf8), to: file)
        return id
    }
}
