/// What `GET /v1/models/{name}/manifest` answers: the version a device should use and how to
/// get and check it.
public struct ModelManifest: Sendable, Hashable, Codable {
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

    /// Creates a manifest.
    public init(model: ModelName, version: Int, sha256: String, size: Int, downloadURL: String, tensors: Tensors, arm: String) {
        self.model = model
        self.version = version
        self.sha256 = sha256
        self.size = size
        self.downloadURL = downloadURL
        self.tensors = tensors
        self.arm = arm
    }
}

/// The error body every endpoint sends: `{"error": {"code": …, "message": …}}`.
public struct ErrorBody: Sendable, Hashable, Codable {
    /// The error.
    public var error: DepotError

    /// Wraps an error.
    public init(error: DepotError) { self.error = error }
}
