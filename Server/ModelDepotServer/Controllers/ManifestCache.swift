import Crypto
import Foundation
import Hummingbird
import ModelDepotShared
import Synchronization

/// Encoded manifests and their ETags in memory, per model: the hot path (every app start)
/// answers without the database. Invalidated by every admin change to the model.
final class ManifestCache: Sendable {
    /// A model's current manifest, or the fact that it has no published version.
    enum Entry: Sendable {
        case manifest(body: ByteBuffer, etag: String)
        case unpublished
    }

    private let entries = Mutex<[ModelName: Entry]>([:])

    func entry(for model: ModelName, load: () async throws -> ModelVersion?) async throws -> Entry {
        if let entry = entries.withLock({ $0[model] }) { return entry }
        let entry: Entry
        if let version = try await load() {
            let manifest = ModelManifest(model: model, version: version.version, sha256: version.sha256, size: version.size,
                                         downloadURL: "/v1/blobs/sha256/\(version.sha256)",
                                         tensors: .init(inputs: version.tflite.inputs, outputs: version.tflite.outputs))
            let body = try JSONResponse.encoder.encode(manifest)
            entry = .manifest(body: ByteBuffer(bytes: body), etag: "\"\(SHA256.hash(data: body).hex.prefix(32))\"")
        } else {
            entry = .unpublished
        }
        entries.withLock { $0[model] = entry }
        return entry
    }

    func invalidate(_ model: ModelName) {
        _ = entries.withLock { $0.removeValue(forKey: model) }
    }
}
