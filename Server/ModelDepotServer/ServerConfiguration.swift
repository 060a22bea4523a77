import Foundation
import Logging
import ModelDepotShared

/// Everything `depot serve` can be told: where to listen, where to keep data, limits.
public struct ServerConfiguration: Sendable {
    /// The address to listen on.
    public var host: String
    /// The port; 0 picks a free one (reported through `onServerRunning`).
    public var port: Int
    /// The data directory: `depot.sqlite`, `blobs/`, `tmp/`.
    public var storageDirectory: String
    /// The catalog's PostgreSQL URL (see ``PostgresLocation``); `nil` keeps it in the embedded
    /// SQLite file `depot.sqlite` under ``storageDirectory``.
    public var database: String?
    /// Where blobs go when not under ``storageDirectory``: an S3-compatible object store.
    public var objectStore: S3Location?
    /// With an object store: answer downloads with a redirect to a pre-signed URL valid this
    /// many seconds instead of streaming them through the server.
    public var blobRedirectLifetime: Int?
    /// The largest upload accepted, in bytes.
    public var maximumUploadSize: Int
    /// What an uploaded model must pass beyond a well-formed file, e.g. how many bytes its
    /// associated files may inflate to (`--max-associated-files-size`).
    public var verificationPolicy = TFLiteVerificationPolicy.default
    /// The log level.
    public var logLevel: Logger.Level
    /// The first admin token's secret, when automation sets it (`DEPOT_ADMIN_TOKEN`); otherwise
    /// the server creates one on first start and prints it once.
    public var initialAdminToken: String?
    /// Failed authentications in a row allowed per client address (and wrong secrets per key
    /// id) before `429` and a backoff of 1 s, doubling up to 5 minutes.
    public var authenticationFailureAllowance = 10
    /// How many installations per client network (/24, /64), model and hour add to the counted
    /// outcomes (``NetworkBudget``).
    public var outcomeInstallationsPerNetwork = NetworkBudget.defaultPerHour
    /// The prefix lengths client networks are cut at, IPv4 then IPv6 (``ClientNetwork``).
    public var outcomeNetworkPrefixes = NetworkPrefixes()
    /// How long one webhook attempt may take, the answer included (tests shorten it).
    var webhookDeadline: Duration = .seconds(10)
    /// How long outcome rows are kept, in days (8 to 3,650): older ones are pruned every hour.
    public var outcomeRetentionDays = 90
    /// The clock authentication backoffs are measured on (tests hold it still).
    public var authenticationClock: @Sendable () -> ContinuousClock.Instant = { .now }
    /// The proxies whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed (`--trusted-proxy`).
    public var trustedProxies: [AddressRange] = []
    /// The URL clients reach the server at (`--public-url`); with https, console cookies are `Secure`.
    public var publicURL: URL?
    /// How long a console session lasts unused.
    public var consoleIdleTimeout: TimeInterval = 3600
    /// How long a console session lasts at most.
    public var consoleSessionLifetime: TimeInterval = 8 * 3600
    /// Timeouts, open connections and request head size.
    public var connectionLimits = ConnectionLimits()
    /// With a shared (PostgreSQL) catalog: how often a replica looks for the others' changes
    /// besides being notified of them.
    public var changePollInterval: Duration = .seconds(1)
    /// How often blobs no version references, and uploads abandoned for a day, are removed.
    public var blobCollectionInterval: Duration = .seconds(3600)
    /// How often usage counts go from memory to the catalog.
    public var usageFlushInterval: Duration = .seconds(10)
    /// How often the server reviews guarded rollouts (and retries their webhooks).
    public var guardReviewInterval: Duration = .seconds(60)
    /// Patches to each published version from this many published versions before it (0: none).
    public var patchSources = 3
    /// The largest file (old or new) that gets patches: making one takes up to about 9 times
    /// its size in memory.
    public var patchMaximumSize = 256 << 20
    /// How often the server looks for patches to make, besides right after a version is
    /// published on this server (so a replica finishes what another left).
    public var patchInterval: Duration = .seconds(60)
    /// How long a signed manifest is good for; the server signs it again after half of it.
    public var manifestLifetime: TimeInterval = 7 * 24 * 3600
    /// The wall clock for signatures, expiries, audit entries and usage minutes (tests move it).
    public var clock: @Sendable () -> Date = { Date() }

    /// Creates a configuration; the defaults serve on 127.0.0.1:8080 from `./storage`.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, storageDirectory: String = "storage",
        maximumUploadSize: Int = 2 << 30, logLevel: Logger.Level = .info, initialAdminToken: String? = nil
    ) {
        self.host = host
        self.port = port
        self.storageDirectory = storageDirectory
        self.maximumUploadSize = maximumUploadSize
        self.logLevel = logLevel
        self.initialAdminToken = initialAdminToken
    }
}
