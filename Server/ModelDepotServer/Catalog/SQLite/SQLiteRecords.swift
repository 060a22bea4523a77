import Foundation
import GRDB
import ModelDepotRollouts
import ModelDepotShared

/// A row of `model`.
struct ModelRecord: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "model"
    enum Columns {
        static let id = Column("id")
        static let name = Column("name")
        static let lastVersionNumber = Column("lastVersionNumber")
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
struct VersionRecord: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "version"
    enum Columns {
        static let modelId = Column("modelId")
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

/// A row of `versionFile`: one companion file of a version.
struct VersionFileRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "versionFile"
    enum Columns {
        static let versionId = Column("versionId")
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

/// A row of `accessKey`.
struct AccessKeyRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "accessKey"
    enum Columns {
        static let id = Column("id")
        static let createdAt = Column("createdAt")
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
struct RolloutRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "rollout"
    var modelId: Int64
    var document: Rollout
    var updatedAt: Date
}

/// A row of `rolloutGuard`: one model's guarded rollouts, and whether one of them is running.
struct RolloutGuardRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "rolloutGuard"
    var modelId: Int64
    var document: [StoredRolloutGuard]
    var running: Bool
}

/// A row of `rolloutChange`: the audit log.
struct RolloutChangeRecord: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "rolloutChange"
    enum Columns {
        static let modelId = Column("modelId")
        static let id = Column("id")
    }

    var id: Int64?
    var modelId: Int64
    var keyID: String
    var at: Date
    var before: Rollout
    var after: Rollout
    var reason: String?

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}
