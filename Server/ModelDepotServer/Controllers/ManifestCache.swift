import Crypto
import Foundation
import Hummingbird
import ModelDepotShared
import Synchronization

/// Rollouts, encoded manifests and their ETags in memory, per model: the hot path (every app
/// start) answers without the database. Invalidated by every admin change to the model.
final class ManifestCache: Sendable {
    /// A manifest, or the fact that the model has no published version to hand out.
    enum Entry: Sendable {
        case manifest(body: ByteBuffer, etag: String, version: Int)
        case unpublished
    }

    /// One answer: a version (`nil` for the newest published one) and the arm that chose it.
    private struct Key: Hashable {
        let version: Int?
        let arm: String
    }

    private let entries = Mutex<[ModelName: [Key: Entry]]>([:])
    private let rollouts = Mutex<[ModelName: Rollout]>([:])

    func rollout(for model: ModelName, load: () async throws -> Rollout) async throws -> Rollout {
        if let rollout = rollouts.withLock({ $0[model] }) { return rollout }
        let rollout = try await load()
        rollouts.withLock { $0[model] = rollout }
        return rollout
    }

    func entry(for model: ModelName, version: Int?, arm: String, load: () async throws -> ModelVersion?) async throws -> Entry {
        let key = Key(version: version, arm: arm)
        if let entry = entries.withLock({ $0[model]?[key] }) { return entry }
        let entry: Entry
        if let version = try await load() {
            let manifest = ModelManifest(model: model, version: version.version, sha256: version.sha256, size: version.size,
                                         downloadURL: "/v1/blobs/sha256/\(version.sha256)",
                                         tensors: .init(inputs: version.tflite.inputs, outputs: version.tflite.outputs), arm: arm)
            let body = try JSONResponse.encoder.encode(manifest)
            entry = .manifest(body: ByteBuffer(bytes: body), etag: "\"\(SHA256.hash(data: body).hex.prefix(32))\"", version: version.version)
        } else {
            entry = .unpublished
        }
        entries.withLock { $0[model, default: [:]][key] = entry }
        return entry
    }

    func invalidate(_ model: ModelName) {
        entries.withLock { _ = $0.removeValue(forKey: model) }
        rollouts.withLock { _ = $0.removeValue(forKey: model) }
    }
}
