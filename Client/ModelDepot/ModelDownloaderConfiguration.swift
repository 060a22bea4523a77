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
    /// Platform, versions, country and custom attributes for rollout conditions.
    public var device: DeviceContext
    /// Where verified models live: one folder per model, metadata next to each file.
    public var cacheDirectory: URL
    /// How many verified versions of a model to keep, so the app can roll back (at least 1).
    public var keptVersions: Int
    /// How to talk HTTP.
    public var transport: any ModelTransport
    /// What the device is doing, for download conditions.
    public var deviceStatus: any DeviceStatusProvider
    /// Where `modelDownloadDidSucceed` / `modelDownloadDidFail` are posted.
    public var notificationCenter: NotificationCenter
    /// Bytes per range request: what an interruption can lose at most, and the step of progress.
    public var downloadChunkSize: Int = 8 << 20
    /// How often a range request is tried again after a network error or a 5xx.
    public var retries = 3
    /// The wait before the first retry; it doubles for each next one.
    public var retryDelay: Duration = .milliseconds(500)

    /// Creates a configuration.
    public init(serverURL: URL, appKey: String, trustedRoot: PinnedRoot, installationID: String? = nil, device: DeviceContext = DeviceContext(),
                cacheDirectory: URL, keptVersions: Int = 2, transport: any ModelTransport = URLSessionTransport(),
                deviceStatus: any DeviceStatusProvider = SystemDeviceStatus(), notificationCenter: NotificationCenter = .default) {
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

/// Where a model may come from.
public enum DownloadPolicy: Sendable {
    /// Only a model already downloaded and verified; an error when there is none.
    case localModel
    /// The downloaded model at once, and a check for a newer one in the background (its
    /// outcome arrives as events and notifications); without a downloaded model, like `latestModel`.
    case localModelUpdateInBackground
    /// Ask the server; when it cannot be reached, the model already downloaded.
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
