import Foundation
import GRDB
import ModelDepotRollouts
import ModelDepotShared

/// A row of the catalog: Swift's camelCase properties in the tables' snake_case columns (the
/// PostgreSQL catalog's names). A property's name must come back from its column's: `keyId`
/// (`key_id`), not `keyID`.
protocol SnakeCaseRecord: FetchableRecord, EncodableRecord {}

extension SnakeCaseRecord {
    static var databaseColumnDecodingStrategy: DatabaseColumnDecodingStrategy { .convertFromSnakeCase }
    static var databaseColumnEncodingStrategy: DatabaseColumnEncodingStrategy { .convertToSnakeCase }
}

/// A row of `model`.
struct ModelRecord: Codable, SnakeCaseRecord, MutablePersistableRecord {
    static let databaseTableName = "model"
    enum Columns {
        static let id = Column("id")
        static let name = Column("name")
        static let lastVersionNumber = Column("last_version_number")
    }

    var id: Int64?
    var name: String
    var description: String
    var tags: [String]
    var createdAt: Date
    /// The highest number ever given, so numbers are never reused after a deletion.
    var lastVersionNumber: Int

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// A row of `version`.
struct VersionRecord: Codable, SnakeCaseRecord, MutablePersistableRecord {
    static let databaseTableName = "version"
    enum Columns {
        static let modelId = Column("model_id")
        static let number = Column("number")
        static let sha256 = Column("sha256")
        static let published = Column("published")
    }

    var id: Int64?
    var modelId: Int64
    var number: Int
    var sha256: String
    var size: Int
    var notes: String
    var published: Bool
    var createdAt: Date
    var publishedAt: Date?
    var tflite: TFLiteModelDescription
    var uploadedBy: String?

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    func version(of model: ModelName, files: [CompanionFile]) -> ModelVersion {
        ModelVersion(
            model: model, version: number, sha256: sha256, size: size, notes: notes, published: published,
            createdAt: createdAt, publishedAt: publishedAt, tflite: tflite, files: files, uploadedBy: uploadedBy)
    }
}

/// A row of `version_file`: one companion file of a version.
struct VersionFileRecord: Codable, SnakeCaseRecord, PersistableRecord {
    static let databaseTableName = "version_file"
    enum Columns {
        static let versionId = Column("version_id")
        static let sha256 = Column("sha256")
        static let position = Column("position")
    }

    var versionId: Int64
    var name: String
    var sha256: String
    var size: Int
    var position: Int

    func file() throws -> CompanionFile { try CompanionFile(name: name, sha256: sha256, size: size) }
}

/// A row of `access_key`.
struct AccessKeyRecord: Codable, SnakeCaseRecord, PersistableRecord {
    static let databaseTableName = "access_key"
    enum Columns {
        static let id = Column("id")
        static let createdAt = Column("created_at")
    }

    var id: String
    var kind: String
    var name: String
    var models: [String]?
    var secretHash: Data
    var createdAt: Date
    var revokedAt: Date?

    func key() throws -> AccessKey {
        AccessKey(
            id: id, kind: AccessKey.Kind(rawValue: kind) ?? .app, name: name,
            models: try models?.map { name throws(DepotError) in try ModelName(name) },
            createdAt: createdAt, revokedAt: revokedAt)
    }
}

/// A row of `rollout`: one document per model.
struct RolloutRecord: Codable, SnakeCaseRecord, PersistableRecord {
    static let databaseTableName = "rollout"
    var modelId: Int64
    var document: Rollout
    var updatedAt: Date
}

/// A row of `rollout_guard`: one model's guarded rollouts, and whether one of them is running.
struct RolloutGuardRecord: Codable, SnakeCaseRecord, PersistableRecord {
    static let databaseTableName = "rollout_guard"
    var modelId: Int64
    var document: [StoredRolloutGuard]
    var hasWork: Bool
}

/// A row of `rollout_change`: the audit log.
struct RolloutChangeRecord: Codable, SnakeCaseRecord, MutablePersistableRecord {
    static let databaseTableName = "rollout_change"
    enum Columns {
        static let modelId = Column("model_id")
        static let id = Column("id")
    }

    var id: Int64?
    var modelId: Int64
    var keyId: String
    var at: Date
    var before: Rollout
    var after: Rollout
    var reason: String?

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
