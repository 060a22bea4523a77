import Foundation
import ModelDepotShared

/// The body of `GET /v1/admin/models/{name}/stats`: manifests served and blob downloads
/// completed, per version, per arm and per time window, and a sample-ratio check per rule.
public struct ModelStats: Sendable, Hashable, Codable {
    /// Counts for one version or one (arm, version).
    public struct Count: Sendable, Hashable, Codable {
        /// The arm (`latest`, `default`, `pin`, `rule:<id>`, `unknown` for downloads whose URL
        /// named no arm the server signed), or `nil` in the per-version totals. Sent as its text.
        public var arm: CountedArm?
        /// The version.
        public var version: Int
        /// Manifests served (200 and 304).
        public var manifests: Int
        /// Downloads of the version's file that reached its last byte.
        public var downloads: Int
        /// In the per-arm totals: installations the arm first handed this version to in the
        /// period (each counted once however often it checks); 0 elsewhere.
        public var installations: Int

        /// Creates a count.
        public init(arm: CountedArm?, version: Int, manifests: Int, downloads: Int, installations: Int = 0) {
            self.arm = arm
            self.version = version
            self.manifests = manifests
            self.downloads = downloads
            self.installations = installations
        }
    }

    /// Totals in one time window.
    public struct Window: Sendable, Hashable, Codable {
        /// When the window starts.
        public var start: Date
        /// Counts per version and arm in the window.
        public var counts: [Count]

        /// Creates a window.
        public init(start: Date, counts: [Count]) {
            self.start = start
            self.counts = counts
        }
    }

    /// The model.
    public var model: ModelName
    /// The start of the period counted.
    public var since: Date
    /// The length of each window in seconds.
    public var windowSeconds: Int
    /// Totals per version over the period.
    public var versions: [Count]
    /// Totals per arm and version over the period.
    public var arms: [Count]
    /// The period in windows, oldest first; windows without traffic are left out.
    public var windows: [Window]
    /// One check per rule of the current rollout, on the installations it handed each version
    /// to over the period (not on their repeated checks, which would make any split look off).
    public var sampleRatio: [SampleRatioCheck]

    /// Creates stats.
    public init(
        model: ModelName, since: Date, windowSeconds: Int, versions: [Count], arms: [Count], windows: [Window],
        sampleRatio: [SampleRatioCheck]
    ) {
        self.model = model
        self.since = since
        self.windowSeconds = windowSeconds
        self.versions = versions
        self.arms = arms
        self.windows = windows
        self.sampleRatio = sampleRatio
    }
}
