import Foundation

/// An admin token or a read-only app key, as `GET /v1/admin/keys` shows it (never its secret).
public struct AccessKey: Sendable, Hashable, Codable {
    /// What a key may do.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// Everything, including the admin API.
        case admin
        /// Read-only client API: manifests and blobs.
        case app
    }

    /// The key's public id, part of its secret.
    public var id: String
    /// What it may do.
    public var kind: Kind
    /// A label for people.
    public var name: String
    /// For app keys: the models it may read; `nil` for all.
    public var models: [ModelName]?
    /// When it was created.
    public var createdAt: Date
    /// When it was revoked, or `nil` while it works.
    public var revokedAt: Date?

    /// Creates a key description.
    public init(id: String, kind: Kind, name: String, models: [ModelName]?, createdAt: Date, revokedAt: Date?) {
        self.id = id
        self.kind = kind
        self.name = name
        self.models = models
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}

/// The body of `POST /v1/admin/keys`.
public struct AccessKeyCreation: Sendable, Hashable, Codable {
    /// Admin token or app key.
    public var kind: AccessKey.Kind
    /// A label for people.
    public var name: String?
    /// For app keys: the models it may read; all when absent.
    public var models: [ModelName]?

    /// Creates a request.
    public init(kind: AccessKey.Kind, name: String? = nil, models: [ModelName]? = nil) {
        self.kind = kind
        self.name = name
        self.models = models
    }
}

/// The answer to `POST /v1/admin/keys`: the key and, this once, its secret.
public struct CreatedAccessKey: Sendable, Hashable, Codable {
    /// The key's public id.
    public var id: String
    /// The secret to send as `Authorization: Bearer <secret>`. Shown only now.
    public var secret: String
    /// What it may do.
    public var kind: AccessKey.Kind
    /// A label for people.
    public var name: String
    /// For app keys: the models it may read; `nil` for all.
    public var models: [ModelName]?
    /// When it was created.
    public var createdAt: Date

    /// Creates an answer.
    public init(key: AccessKey, secret: String) {
        id = key.id
        self.secret = secret
        kind = key.kind
        name = key.name
        models = key.models
        createdAt = key.createdAt
    }
}

/// The body of `GET /v1/admin/keys`.
public struct AccessKeyList: Sendable, Hashable, Codable {
    /// Every key, oldest first.
    public var keys: [AccessKey]

    /// Creates a list.
    public init(keys: [AccessKey]) { self.keys = keys }
}
