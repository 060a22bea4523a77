import Foundation

/// The payload of what `GET /v1/models/{name}/manifest` answers (inside a ``SignedEnvelope``):
/// the version a device should use, how to get and check it, and how long the answer is good for.
public struct ModelManifest: Sendable, Hashable, Codable {
    /// The largest manifest envelope read (64 KiB).
    public static let maximumSize = 64 << 10

    /// A model's inputs and outputs.
    public struct Tensors: Sendable, Hashable, Codable {
        /// The first subgraph's inputs.
        public var inputs: [TFLiteTensor]
        /// The first subgraph's outputs.
        public var outputs: [TFLiteTensor]

        /// Creates the pair.
        public init(inputs: [TFLiteTensor], outputs: [TFLiteTensor]) {
            self.inputs = inputs
            self.outputs = outputs
        }
    }

    /// Always `manifest`: a root document can't pass for a manifest.
    public var type = "manifest"
    /// The model's name.
    public var model: ModelName
    /// The version to use.
    public var version: Int
    /// The file's SHA-256 in lower-case hex: check the download against it.
    public var sha256: String
    /// The file's size in bytes.
    public var size: Int
    /// Where to download the file, relative to the server's URL (`/v1/blobs/sha256/<hex>`).
    public var downloadURL: String
    /// The model's inputs and outputs.
    public var tensors: Tensors
    /// What chose the version, for attributing results: `latest` (no rollout applies), `default`,
    /// `pin`, or `rule:<id>`.
    public var arm: String
    /// Grows whenever what the server hands out for the model changes (and at restarts), per model
    /// name across deletion and re-creation, and at least the server's clock in milliseconds; never
    /// lower than a manifest the device accepted before.
    public var manifestVersion: Int
    /// When it was signed.
    public var issued: Date
    /// After this the manifest is not trusted for new downloads; the server re-signs it well before.
    public var expires: Date

    /// Creates a manifest.
    public init(model: ModelName, version: Int, sha256: String, size: Int, downloadURL: String, tensors: Tensors, arm: String,
                manifestVersion: Int, issued: Date, expires: Date) {
        self.model = model
        self.version = version
        self.sha256 = sha256
        self.size = size
        self.downloadURL = downloadURL
        self.tensors = tensors
        self.arm = arm
        self.manifestVersion = manifestVersion
        self.issued = issued
        self.expires = expires
    }
}

/// The error body every endpoint sends: `{"error": {"code": …, "message": …}}`.
public struct ErrorBody: Sendable, Hashable, Codable {
    /// The error.
    public var error: DepotError

    /// Wraps an error.
    public init(error: DepotError) { self.error = error }
}
