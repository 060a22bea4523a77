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

    /// A patch the server made that turns a file a device may hold into this version's file
    /// (``Patch``): download it, check it against its SHA-256 and size, apply it to the held file,
    /// and check the result against the file's own SHA-256 and size as a download's.
    public struct Patch: Sendable, Hashable, Codable {
        /// The SHA-256 of the file it applies to, in lower-case hex.
        public var from: String
        /// The patch's SHA-256, in lower-case hex.
        public var sha256: String
        /// The patch's size in bytes.
        public var size: Int
        /// Where to download it, relative to the server's URL (`/v1/blobs/sha256/<hex>`).
        public var downloadURL: String

        /// Creates an entry.
        public init(from: String, sha256: String, size: Int, downloadURL: String) {
            self.from = from
            self.sha256 = sha256
            self.size = size
            self.downloadURL = downloadURL
        }
    }

    /// A companion file of the version: check it against its SHA-256 and size, as the model.
    public struct File: Sendable, Hashable, Codable {
        /// The name the app asks for (``CompanionFile/name``).
        public var name: String
        /// The file's SHA-256 in lower-case hex.
        public var sha256: String
        /// The file's size in bytes.
        public var size: Int
        /// Where to download it, relative to the server's URL (`/v1/blobs/sha256/<hex>`).
        public var downloadURL: String
        /// Patches to it from the same file of earlier versions; empty when there are none.
        public var patches: [Patch]

        /// Creates an entry.
        public init(name: String, sha256: String, size: Int, downloadURL: String, patches: [Patch] = []) {
            self.name = name
            self.sha256 = sha256
            self.size = size
            self.downloadURL = downloadURL
            self.patches = patches
        }

        private enum CodingKeys: String, CodingKey {
            case name, sha256, size, downloadURL, patches
        }

        /// Decodes an entry; one from a server that makes no patches has none.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            sha256 = try container.decode(String.self, forKey: .sha256)
            size = try container.decode(Int.self, forKey: .size)
            downloadURL = try container.decode(String.self, forKey: .downloadURL)
            patches = try container.decodeIfPresent([Patch].self, forKey: .patches) ?? []
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
    /// Patches to the model's file from the files of earlier versions (at most a few, each
    /// smaller than the file); empty when there are none.
    public var patches: [Patch] = []
    /// The version's companion files, installed with the model as one version; empty when it has none.
    public var files: [File] = []
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
    public init(
        model: ModelName, version: Int, sha256: String, size: Int, downloadURL: String, tensors: Tensors,
        patches: [Patch] = [], files: [File] = [], arm: String, manifestVersion: Int, issued: Date, expires: Date
    ) {
        self.model = model
        self.version = version
        self.sha256 = sha256
        self.size = size
        self.downloadURL = downloadURL
        self.tensors = tensors
        self.patches = patches
        self.files = files
        self.arm = arm
        self.manifestVersion = manifestVersion
        self.issued = issued
        self.expires = expires
    }
}

extension ModelManifest {
    private enum CodingKeys: String, CodingKey {
        case type, model, version, sha256, size, downloadURL, tensors, patches, files, arm, manifestVersion, issued, expires
    }

    /// Decodes a manifest; one from a server without companion files or patches has none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decode(String.self, forKey: .type)
        model = try container.decode(ModelName.self, forKey: .model)
        version = try container.decode(Int.self, forKey: .version)
        sha256 = try container.decode(String.self, forKey: .sha256)
        size = try container.decode(Int.self, forKey: .size)
        downloadURL = try container.decode(String.self, forKey: .downloadURL)
        tensors = try container.decode(Tensors.self, forKey: .tensors)
        patches = try container.decodeIfPresent([Patch].self, forKey: .patches) ?? []
        files = try container.decodeIfPresent([File].self, forKey: .files) ?? []
        arm = try container.decode(String.self, forKey: .arm)
        manifestVersion = try container.decode(Int.self, forKey: .manifestVersion)
        issued = try container.decode(Date.self, forKey: .issued)
        expires = try container.decode(Date.self, forKey: .expires)
    }
}

/// The error body every endpoint sends: `{"error": {"code": …, "message": …}}`.
public struct ErrorBody: Sendable, Hashable, Codable {
    /// The error.
    public var error: DepotError

    /// Wraps an error.
    public init(error: DepotError) { self.error = error }
}
