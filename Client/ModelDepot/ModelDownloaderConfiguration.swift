import Foundation
import ModelDepotShared

/// What a ``ModelDownloader`` needs: the server, the app key, the pinned root of trust, what the
/// device says about itself for targeting, where to keep models, and how to talk HTTP.
public struct ModelDownloaderConfiguration: Sendable {
    /// The ModelDepot server, e.g. `https://models.example.com`.
    public var serverURL: URL
    /// A read-only app key (`depot keys create --app`).
    public var appKey: String
    /// What the app trusts: the root public key, or the first root document. Every manifest must
    /// be signed by a key the chain of root documents from there lists.
    public var trustedRoot: PinnedRoot
    /// How far the device's clock may run ahead of the server's when checking expiries (5 minutes).
    public var clockSkew: TimeInterval = 300
    /// How often the SDK asks for a newer root document even when nothing suggests one (a day).
    public var rootCheckInterval: TimeInterval = 24 * 3600
    /// The most root documents fetched in one check.
    public var maximumRootSteps = 32
    /// The device's wall clock, for expiries.
    public var clock: @Sendable () -> Date = { Date() }
    /// The installation id for rollouts; `nil` to use a random UUID persisted in the cache directory.
    public var installationID: String?
    /// Platform, versions, country and custom attributes for rollout conditions. What it leaves
    /// unset the SDK fills in: the platform (`ios`, `macos`, `linux`, …), the OS version, the
    /// app's `CFBundleShortVersionString` and ``modelDepotSDKVersion``; a value set here wins.
    public var device: DeviceContext
    /// Where verified models and partial downloads live: one folder per model, metadata next to
    /// each file. By default ``defaultDirectory`` (Application Support on Apple platforms, kept
    /// out of backups), which the system never purges.
    public var cacheDirectory: URL
    /// Where the installation id, the trust state (rollback protection) and the queued outcomes
    /// live. `nil`: the cache directory, unless that is inside a folder the system purges (Caches),
    /// in which case ``defaultDirectory``'s `state/` folder, so a purge costs downloads but never
    /// resets rollback protection or moves the device to another rollout bucket. State that an
    /// earlier SDK kept beside the models is moved there once.
    public var stateDirectory: URL?
    /// How many verified versions of a model to keep, so the app can roll back (at least 1).
    public var keptVersions: Int
    /// How to talk HTTP: ``defaultModelTransport()`` unless told otherwise.
    public var transport: any ModelTransport
    /// What the device is doing, for download conditions: ``defaultDeviceStatus()`` unless told otherwise.
    public var deviceStatus: any DeviceStatusProvider
    /// How a range of a download asks the system for time to finish when the app leaves the
    /// foreground: ``defaultBackgroundExecution()`` unless told otherwise.
    public var backgroundExecution: any BackgroundExecution = defaultBackgroundExecution()
    /// A session the system runs outside the app (`URLBackgroundDownloadSession` on Apple
    /// platforms) for downloads whose conditions allow background downloading: they go on while
    /// the app is suspended or after it was terminated, as one task for the rest of the file.
    /// `nil` (the default): every download runs in the app, range by range.
    public var backgroundSession: (any BackgroundDownloadSession)?
    /// Where `modelDownloadDidSucceed` / `modelDownloadDidFail` are posted.
    public var notificationCenter: NotificationCenter
    /// Bytes per range request: what an interruption can lose at most, and the step of progress.
    public var downloadChunkSize: Int = 8 << 20
    /// How often a range request is tried again after a network error or a 5xx.
    public var retries = 3
    /// The wait before the first retry; it doubles for each next one.
    public var retryDelay: Duration = .milliseconds(500)
    /// Origins besides the server's that blobs may come from, e.g. a CDN or an object store that
    /// answers pre-signed URLs: `[URL(string: "https://cdn.example.com")!]` (scheme, host and port
    /// count; the path does not). Download URLs and redirects to any other origin are refused
    /// (`origin_not_allowed`). The app key is sent only to the server's own origin.
    public var allowedDownloadOrigins: [URL] = []
    /// The most redirects followed for one request (each to an allowed origin, never https → http).
    public var maximumRedirects = 5
    /// The largest model downloaded: a manifest that names a bigger file is refused before any
    /// byte is fetched (`model_too_large`). At most the verifier's limit (2 GiB − 1), the default.
    public var maximumModelSize = TFLiteVerifier.maximumSize - 1
    /// How long a transfer may go without a new byte before it is cancelled (`transfer_stalled`);
    /// the current model stays, and a download resumes from its partial file next time.
    public var stallTimeout: Duration = .seconds(60)
    /// The least average rate over a window before a transfer is cancelled (`transfer_too_slow`);
    /// 1 KiB/s over 60 s by default, `nil` for none.
    public var minimumTransferRate: TransferRate? = TransferRate(bytesPerSecond: 1024, window: .seconds(60))
    /// What a downloaded or bundled model must pass beyond a well-formed file, checked again each
    /// time its bytes are loaded. The default is the server's: associated files (labels,
    /// vocabularies) may inflate to 256 MiB together (`TFLiteVerificationPolicy/maximumAssociatedFilesSize`);
    /// a model over it is refused (`associated_files_too_large`) and the current one stays.
    public var verificationPolicy = TFLiteVerificationPolicy.default

    /// Whether model-health outcomes and the app's metrics are recorded and sent to the server
    /// (``OutcomeRecorder``). `false` records nothing, sends nothing and deletes what was queued.
    public var recordsOutcomes = true
    /// When queued outcomes may be sent.
    public var outcomeConditions = DownloadConditions()
    /// How long after the downloader's start or its last send a check of a model also sends the
    /// queued outcomes, in the background (``ModelDownloader/sendOutcomes(conditions:)`` sends at once).
    public var outcomeSendInterval: Duration = .seconds(3_600)

    /// Where a downloader keeps its files unless told otherwise: Application Support/ModelDepot
    /// on Apple platforms (inside the app's bundle identifier on macOS), `$XDG_DATA_HOME/ModelDepot`
    /// elsewhere. The SDK excludes its folders from backups: a restored backup must not give a
    /// second device the same installation id.
    public static var defaultDirectory: URL { StorageLocations.systemDurableFolder() }

    /// The folders this configuration keeps its files in.
    var storage: StorageLocations {
        StorageLocations.resolve(
            cache: cacheDirectory, state: stateDirectory, purgeable: StorageLocations.systemPurgeableFolders(),
            durable: StorageLocations.systemDurableFolder())
    }

    /// Creates a configuration.
    public init(
        serverURL: URL, appKey: String, trustedRoot: PinnedRoot, installationID: String? = nil, device: DeviceContext = DeviceContext(),
        cacheDirectory: URL = ModelDownloaderConfiguration.defaultDirectory, keptVersions: Int = 2,
        transport: any ModelTransport = defaultModelTransport(),
        deviceStatus: any DeviceStatusProvider = defaultDeviceStatus(), notificationCenter: NotificationCenter = .default
    ) {
        self.serverURL = serverURL
        self.appKey = appKey
        self.trustedRoot = trustedRoot
        self.installationID = installationID
        self.device = device
        self.cacheDirectory = cacheDirectory
        self.keptVersions = max(1, keptVersions)
        self.transport = transport
        self.deviceStatus = deviceStatus
        self.notificationCenter = notificationCenter
    }
}

/// Where a model may come from, and what happens when the check of the server fails.
///
/// Every check ends in an outcome the app can see: a new or confirmed model (an `installed` or
/// `upToDate` event), or a failure (a `failed` event and `modelDownloadDidFail` with the reason:
/// `unavailable` when offline or the server fails, `manifest_expired` when the manifest expired
/// and was not renewed, or the refusal's own code).
public enum DownloadPolicy: Sendable {
    /// Only a model already downloaded and verified, without asking the server; an error
    /// (`not_found`) when there is none. Its ``VerifiedModel/confirmedAt`` and
    /// ``VerifiedModel/expires`` say how fresh it is.
    case localModel
    /// The downloaded model at once, and a check for a newer one in the background, whose
    /// outcome (a failure included) arrives only as events and notifications; without a
    /// downloaded model, like `latestModel`.
    case localModelUpdateInBackground
    /// Ask the server and wait for the newest model. When the server cannot be reached or answers
    /// a server error (5xx), the model already downloaded is returned with the failure in
    /// ``VerifiedModel/checkFailure`` (and a `failed` event and notification); with nothing
    /// downloaded, the call throws. A refused answer (a bad signature, a replayed or expired
    /// manifest, a tampered download) always throws; the current model stays in use.
    case latestModel
}

/// The root of trust an app ships with.
public enum PinnedRoot: Sendable, Hashable {
    /// A root public key, base64 (what `depot keys root generate` prints): the SDK starts from
    /// the first root document (1, 2, …) that lists this key and is signed by it, so a release may
    /// pin a key that a rotation introduced.
    case publicKey(String)
    /// A root document's envelope as the server serves it (`/v1/keys/root/{n}.json`).
    case rootDocument(Data)
}
