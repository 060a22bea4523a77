import Foundation

/// One immutable version of a model: `GET /v1/admin/models/{name}/versions/{number}`.
public struct ModelVersion: Sendable, Hashable, Codable {
    /// The model's name.
    public var model: ModelName
    /// The version number: 1, 2, 3, … never reused, even after a deletion.
    public var version: Int
    /// The file's SHA-256, in lower-case hex.
    public var sha256: String
    /// The file's size in bytes.
    public var size: Int
    /// Release notes given at upload.
    public var notes: String
    /// Whether devices may get this version.
    public var published: Bool
    /// When it was uploaded.
    public var createdAt: Date
    /// The id of the admin token that uploaded it (`nil` for versions uploaded before this was recorded).
    public var uploadedBy: String?
    /// When it was last published, or `nil`.
    public var publishedAt: Date?
    /// What the file holds, as the verifier read it at upload.
    public var tflite: TFLiteModelDescription
    /// The files uploaded with the model (labels, settings), in upload order.
    public var files: [CompanionFile]

    /// Creates a version.
    public init(
        model: ModelName, version: Int, sha256: String, size: Int, notes: String, published: Bool,
        createdAt: Date, publishedAt: Date?, tflite: TFLiteModelDescription, files: [CompanionFile], uploadedBy: String? = nil
    ) {
        self.model = model
        self.version = version
        self.sha256 = sha256
        self.size = size
        self.notes = notes
        self.published = published
        self.createdAt = createdAt
        self.uploadedBy = uploadedBy
        self.publishedAt = publishedAt
        self.tflite = tflite
        self.files = files
    }
}

/// The body of `GET /v1/admin/models/{name}/versions`.
public struct ModelVersionList: Sendable, Hashable, Codable {
    /// Every version, newest first.
    public var versions: [ModelVersion]

    /// Creates a list.
    public init(versions: [ModelVersion]) { self.versions = versions }
}
