import Foundation

/// A model as the admin API shows it: `GET /v1/admin/models/{name}`.
public struct ModelSummary: Sendable, Hashable, Codable {
    /// The model's name.
    public var name: ModelName
    /// Free text for people.
    public var description: String
    /// Labels for finding models.
    public var tags: [String]
    /// When the model was created.
    public var createdAt: Date
    /// How many versions exist now (deleted ones not counted).
    public var versionCount: Int
    /// The highest version number, or `nil` without versions.
    public var latestVersion: Int?
    /// The highest published version number: what devices get without a rollout.
    public var publishedVersion: Int?

    /// Creates a summary.
    public init(
        name: ModelName, description: String, tags: [String], createdAt: Date,
        versionCount: Int, latestVersion: Int?, publishedVersion: Int?
    ) {
        self.name = name
        self.description = description
        self.tags = tags
        self.createdAt = createdAt
        self.versionCount = versionCount
        self.latestVersion = latestVersion
        self.publishedVersion = publishedVersion
    }
}

/// The body of `POST /v1/admin/models`.
public struct ModelCreation: Sendable, Hashable, Codable {
    /// The new model's name.
    public var name: ModelName
    /// Free text for people; empty by default.
    public var description: String?
    /// Labels; none by default.
    public var tags: [String]?

    /// Creates a request.
    public init(name: ModelName, description: String? = nil, tags: [String]? = nil) {
        self.name = name
        self.description = description
        self.tags = tags
    }
}

/// The body of `GET /v1/admin/models`.
public struct ModelList: Sendable, Hashable, Codable {
    /// Every model, sorted by name.
    public var models: [ModelSummary]

    /// Creates a list.
    public init(models: [ModelSummary]) { self.models = models }
}
