import Foundation
import Hummingbird
import ModelDepotShared

/// `/v1/admin/models/{name}/versions`: streamed uploads, listing, publishing, deletion.
struct VersionsController {
    let catalog: any ModelCatalog
    let blobs: any BlobStore
    let index: BlobIndex
    let manifests: ManifestCache
    let metrics: ServerMetrics
    let maximumUploadSize: Int
    let clock: @Sendable () -> Date

    func register(in group: RouterGroup<AppRequestContext>) {
        group.post("models/:name/versions", use: upload)
        group.get("models/:name/versions", use: list)
        group.get("models/:name/versions/:number", use: show)
        group.post("models/:name/versions/:number/publish") { try await setPublished(true, $0, $1) }
        group.post("models/:name/versions/:number/unpublish") { try await setPublished(false, $0, $1) }
        group.delete("models/:name/versions/:number", use: delete)
    }

    /// Streams the body to a temporary file, hashing as it arrives; verifies the digest the
    /// client sent and the TFLite structure; only then stores version N+1.
    func upload(_ request: Request, context: AppRequestContext) async throws -> Response {
        let name = try context.modelName()
        let expected = try expectedDigest(request)
        // A length past Int's range (the HTTP parser takes up to 2^64 - 1) is too large as well.
        if let header = request.headers[.contentLength], (Int(header) ?? .max) > maximumUploadSize {
            throw tooLarge(Int(header) ?? .max)
        }
        _ = try await catalog.model(name)
        let upload = try blobs.beginUpload()
        do {
            let version = try await receive(request, into: upload, for: name, expected: expected)
            metrics.recordUpload(stored: true)
            try await index.reload()
            manifests.invalidate(name)
            return try JSONResponse.make(version, status: .created,
                                         headers: [.location: "/v1/admin/models/\(name)/versions/\(version.version)"])
        } catch {
            await blobs.discard(upload)
            metrics.recordUpload(stored: false)
            throw error
        }
    }

    private func receive(_ request: Request, into upload: BlobUpload, for name: ModelName, expected: String?) async throws -> ModelVersion {
        var size = 0
        for try await buffer in request.body {
            size += buffer.readableBytes
            guard size <= maximumUploadSize else { throw tooLarge(size) }
            try await upload.write(buffer)
        }
        let digest = try await upload.finish()
        if let expected, expected != digest {
            throw DepotError(.digestMismatch, "The upload hashes to SHA-256 \(digest), but the client sent \(expected) in Depot-Content-SHA256: the file changed in transit. Nothing was stored; upload again.")
        }
        let tflite = try MappedFile(path: upload.temporaryPath).withBytes { bytes throws(DepotError) in
            try TFLiteVerifier().verify(bytes)
        }
        let notes = request.uri.queryParameters.get("notes").map { String($0) } ?? ""
        let verified = VerifiedUpload(sha256: digest, size: size, notes: notes, tflite: tflite)
        let blobs = blobs
        return try await catalog.addVersion(verified, to: name, publish: request.uri.queryParameters.get("publish") == "true",
                                            at: clock()) { try blobs.commit(upload, sha256: digest) }
    }

    private func expectedDigest(_ request: Request) throws -> String? {
        guard let header = request.headers[.depotContentSHA256] else { return nil }
        let digest = header.lowercased()
        guard digest.count == 64, digest.allSatisfy(\.isHexDigit) else {
            throw DepotError(.badRequest, "\(DepotHeader.contentSHA256) '\(header.prefix(80))' is not 64 hexadecimal digits.")
        }
        return digest
    }

    private func tooLarge(_ size: Int) -> DepotError {
        DepotError(.payloadTooLarge, "The upload has \(size > maximumUploadSize ? "more than \(maximumUploadSize)" : "\(size)") bytes; this server accepts at most \(maximumUploadSize) (depot serve --max-upload-size). Nothing was stored.")
    }

    func list(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(ModelVersionList(versions: try await catalog.versions(of: try context.modelName())))
    }

    func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(try await catalog.version(try context.versionNumber(), of: try context.modelName()))
    }

    func setPublished(_ published: Bool, _ request: Request, _ context: AppRequestContext) async throws -> Response {
        let name = try context.modelName()
        let version = try await catalog.setPublished(published, version: try context.versionNumber(), of: name, at: clock())
        manifests.invalidate(name)
        return try JSONResponse.make(version)
    }

    func delete(_ request: Request, context: AppRequestContext) async throws -> Response {
        let name = try context.modelName()
        let unreferenced = try await catalog.deleteVersion(try context.versionNumber(), of: name)
        try await index.removeUnreferenced(unreferenced, logger: context.logger)
        manifests.invalidate(name)
        return Response(status: .noContent)
    }
}
