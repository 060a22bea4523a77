import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// Stores models, their versions, rollouts, usage, outcomes, access keys and signing documents:
/// the storage port for everything but file bytes, in one SQLite file or one PostgreSQL database.
/// Each role is its own protocol, for what needs only that role.
public protocol ModelCatalog: ModelVersionCatalog, RolloutCatalog, UsageCatalog, OutcomeCatalog, AccessCatalog, SigningCatalog {}

/// A console session as the catalog keeps it: never the cookie's value, only its SHA-256.
public struct StoredSession: Sendable, Hashable {
    public var id: String
    public var keyID: String
    public var startedAt: Date
    public var usedAt: Date
}

/// Counted usage of one version through one arm in one minute.
public struct UsageRow: Sendable, Hashable {
    public var version: Int
    public var arm: CountedArm
    public var kind: UsageKind
    public var minute: Int
    public var count: Int
}

/// Installations an arm handed a version to.
public struct InstallationCount: Sendable, Hashable {
    public var arm: CountedArm
    public var version: Int
    public var count: Int
}

/// A blob some versions reference: its size and their models.
public struct BlobReference: Sendable, Hashable {
    public var sha256: String
    public var size: Int
    public var models: [ModelName]
}

/// An uploaded file that passed hashing and TFLite verification, waiting to become a version.
public struct VerifiedUpload: Sendable {
    public var sha256: String
    public var size: Int
    public var notes: String
    public var tflite: TFLiteModelDescription
    /// The companion files, stored already.
    public var files: [CompanionFile]
    /// The id of the admin token that uploaded it.
    public var uploadedBy: String?

    public init(
        sha256: String, size: Int, notes: String, tflite: TFLiteModelDescription, files: [CompanionFile] = [],
        uploadedBy: String? = nil
    ) {
        self.sha256 = sha256
        self.size = size
        self.notes = notes
        self.tflite = tflite
        self.files = files
        self.uploadedBy = uploadedBy
    }
}
