import Foundation
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
        let version: Int, published: String, size: Int, sha256: String, shortDigest: String
        let isPublished: Bool
        let signature: String, metadata: String, files: String, notes: String, uploaded: String

        init(_ version: ModelVersion) {
            self.version = version.version
            published = version.published ? "yes" : "no"
            isPublished = version.published
            size = version.size
            sha256 = version.sha256
            shortDigest = String(version.sha256.prefix(12))
            let describe = { (tensors: [TFLiteTensor]) in tensors.map { "\($0.name) \($0.type) \($0.shapeSignature)" }.joined(separator: ", ") }
            signature = "\(describe(version.tflite.inputs)) → \(describe(version.tflite.outputs))"
            var metadata: [String] = []
            if let model = version.tflite.modelMetadata {
                metadata.append([model.name, model.version].compactMap { $0 }.joined(separator: " "))
            }
            for file in version.tflite.labelFiles {
                let shown = file.labels.prefix(5).joined(separator: ", ") + (file.labels.count > 5 ? ", …" : "")
                metadata.append("\(file.labels.count) labels\(file.locale.map { " (\($0))" } ?? ""): \(shown)")
            }
            self.metadata = metadata.isEmpty ? "none" : metadata.joined(separator: "; ")
            files = version.files.isEmpty ? "none" : version.files.map { "\($0.name) (\($0.size) bytes)" }.joined(separator: ", ")
            notes = version.notes
            uploaded = version.createdAt.formatted(.iso8601) + (version.uploadedBy.map { " by key \($0)" } ?? "")
        }
    }

    struct Model {
        let csrf: String
        let error: String?
        let name: String, description: String?, handsOut: String
        let versions: [VersionRow]
        let hasVersions: Bool
        /// The largest model the server takes, for the upload script to refuse a larger file at once.
        let maximumUploadSize: Int

        init(csrf: String, error: String?, name: String, description: String, handsOut: String, versions: [VersionRow],
             maximumUploadSize: Int) {
            self.csrf = csrf
            self.error = error
            self.name = name
            self.description = description.isEmpty ? nil : description
            self.handsOut = handsOut
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

    /// What the rollout gives a device no pin or rule covers, and how many pins and rules it has.
    static func handsOut(_ rollout: Rollout, summary: ModelSummary) -> String {
        var text = rollout.defaultVersion.map { "v\($0) by default" }
            ?? summary.publishedVersion.map { "v\($0) (newest published)" } ?? "nothing (no published version)"
        if !rollout.rules.isEmpty { text += ", \(rollout.rules.count) rule(s)" }
        if !rollout.pins.isEmpty { text += ", \(rollout.pins.count) pin(s)" }
        return text
    }
}
