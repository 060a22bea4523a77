import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// What the console's templates render: plain values, already formatted for people.
/// Templates see stored properties only (Mustache reads values by reflection), so flags are stored.
enum ConsolePages {
    struct SignIn { let error: String? }

    struct ModelRow {
        let name: String, description: String, tags: String, newest: String, published: String, handsOut: String
    }

    struct Models {
        let csrf: String
        let error: String?
        let models: [ModelRow]
        let hasModels: Bool

        init(csrf: String, error: String?, models: [ModelRow]) {
            self.csrf = csrf
            self.error = error
            self.models = models
            hasModels = !models.isEmpty
        }
    }

    struct VersionRow {
        let version: Int, published: String, size: Int, notes: String, uploaded: String
        let isPublished: Bool

        init(_ version: ModelVersion) {
            self.version = version.version
            published = version.published ? "yes" : "no"
            isPublished = version.published
            size = version.size
            notes = version.notes
            uploaded = version.createdAt.formatted(.iso8601) + (version.uploadedBy.map { " by key \($0)" } ?? "")
        }
    }

    /// One version in full: the lines `depot versions MODEL N` prints.
    struct VersionPage {
        let csrf: String
        let error: String?
        let name: String, version: Int, isPublished: Bool
        let lines: String

        init(csrf: String, version: ModelVersion) {
            self.csrf = csrf
            error = nil
            name = version.model.rawValue
            self.version = version.version
            isPublished = version.published
            lines = VersionText(version: version).lines.joined(separator: "\n")
        }
    }

    struct Model {
        let csrf: String
        let error: String?
        let name: String, description: String?
        /// What each kind of device gets (``RolloutSegments``).
        let segments: [String]
        /// What publishing a version just changed, after a publish.
        let notice: String?
        let versions: [VersionRow]
        let hasVersions: Bool
        /// The largest model the server takes, for the upload script to refuse a larger file at once.
        let maximumUploadSize: Int

        init(
            csrf: String, error: String?, name: String, description: String, segments: [String], notice: String?, versions: [VersionRow],
            maximumUploadSize: Int
        ) {
            self.csrf = csrf
            self.error = error
            self.name = name
            self.description = description.isEmpty ? nil : description
            self.segments = segments
            self.notice = notice
            self.versions = versions
            hasVersions = !versions.isEmpty
            self.maximumUploadSize = maximumUploadSize
        }
    }

    struct DeleteVersion {
        let csrf: String
        let error: String?
        let name: String
        let version: Int
    }

    struct DeleteModel {
        let csrf: String
        let error: String?
        let name: String
        let versionCount: Int
    }

    struct KeyRow {
        let id: String, kind: String, name: String, models: String, created: String, revoked: String?

        init(_ key: AccessKey) {
            id = key.id
            kind = key.kind == .admin ? "admin token" : "app key"
            name = key.name
            models = key.models.map { $0.map(\.rawValue).joined(separator: ", ") } ?? "all"
            created = key.createdAt.formatted(.iso8601)
            revoked = key.revokedAt?.formatted(.iso8601)
        }
    }

    struct CreatedKey { let id: String, secret: String }

    struct Keys {
        let csrf: String
        let error: String?
        let created: CreatedKey?
        let keys: [KeyRow]
        let activeKey: String
        let pendingKey: String?
        let rootVersion: String
        let signingWarning: String?
    }

    struct RevokeKey {
        let csrf: String
        let error: String?
        let key: KeyRow
    }

    /// What the rollout gives each kind of device, on one line.
    static func handsOut(_ rollout: Rollout, summary: ModelSummary) -> String {
        RolloutSegments(rollout, newestPublished: summary.publishedVersion).summary
    }
}
