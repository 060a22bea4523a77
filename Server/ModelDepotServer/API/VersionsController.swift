import Foundation
import Hummingbird
import Logging
import ModelDepotShared

/// `/v1/admin/models/{name}/versions`: streamed uploads, listing, publishing, deletion.
struct VersionsController {
    let catalog: any ModelCatalog
    let blobs: any BlobStore
    let service: VersionService
    let metrics: ServerMetrics
    let maximumUploadSize: Int
    let verificationPolicy: TFLiteVerificationPolicy

    func register(in group: RouterGroup<AppRequestContext>) {
        group.post("models/:name/versions", use: upload)
        group.get("models/:name/versions", use: list)
        group.get("models/:name/versions/:number", use: show)
        group.get("models/:name/versions/:number/patches", use: patches)
        group.post("models/:name/versions/:number/publish") { try await setPublished(true, $0, $1) }
        group.post("models/:name/versions/:number/unpublish") { try await setPublished(false, $0, $1) }
        group.delete("models/:name/versions/:number", use: delete)
    }

    /// What the client says of the file before its body: its digest (or that the digest follows
    /// as a trailer) and, for a chunked body, its size.
    private struct Announced {
        var digest: String?
        var digestInTrailer = false
        var size: Int?
    }

    /// Streams the body to temporary space, hashing as it arrives: the model, then any companion
    /// files (``DepotHeader/companionFiles``); verifies the digests and sizes the client sent and the
    /// TFLite structure; only then stores version N+1 with its files.
    func upload(_ request: Request, context: AppRequestContext) async throws -> Response {
        let name = try context.modelName()
        let announced = try announced(request)
        let files =
            try request.headers[.depotCompanionFiles].map { header throws(DepotError) in try CompanionFile.files(fromHeader: header) } ?? []
        if !files.isEmpty, announced.size == nil {
            throw DepotError(
                .badRequest,
                "An upload with \(DepotHeader.companionFiles) needs \(DepotHeader.contentLength), the model's size, to tell the model's bytes from the files'."
            )
        }
        let companionBytes = files.map(\.size).reduce(0, +)
        // A length past Int's range (the HTTP parser takes up to 2^64 - 1) is too large as well.
        if let header = request.headers[.contentLength], (Int(header) ?? .max) > maximumUploadSize + companionBytes {
            throw tooLarge(announced: Int(header).map { $0 - companionBytes })
        }
        if let size = announced.size, size > maximumUploadSize { throw tooLarge(announced: size) }
        _ = try await catalog.model(name)
        var uploads: [any BlobUpload] = []
        do {
            let model = try blobs.beginUpload()
            uploads.append(model)
            var parts = [UploadParts.Part(upload: model, size: files.isEmpty ? nil : announced.size, file: nil)]
            for file in files {
                let upload = try blobs.beginUpload()
                uploads.append(upload)
                parts.append(UploadParts.Part(upload: upload, size: file.size, file: file))
            }
            let version = try await receive(request, context, into: UploadParts(parts), for: name, announced: announced)
            metrics.recordUpload(stored: true)
            return try JSONResponse.make(
                version, status: .created,
                headers: [.location: "/v1/admin/models/\(name)/versions/\(version.version)"])
        } catch {
            for upload in uploads { await upload.discard() }
            metrics.recordUpload(stored: false)
            throw error
        }
    }

    private func receive(
        _ request: Request, _ context: AppRequestContext, into parts: UploadParts, for name: ModelName,
        announced: Announced
    ) async throws -> ModelVersion {
        var parts = parts
        var size = 0
        let companionBytes = parts.parts.dropFirst().compactMap(\.size).reduce(0, +)
        for try await buffer in request.body {
            size += buffer.readableBytes
            let modelBytes = size - companionBytes
            guard modelBytes <= maximumUploadSize else { throw tooLarge(announced: nil) }
            if let announcedSize = announced.size, parts.parts.count == 1, size > announcedSize {
                throw sizeMismatch(announced: announcedSize, received: nil)
            }
            try await parts.write(buffer)
        }
        if let announcedSize = announced.size, parts.parts.count == 1, announcedSize != size {
            throw sizeMismatch(announced: announcedSize, received: size)
        }
        try parts.checkComplete()
        var expected = announced.digest
        if announced.digestInTrailer {
            guard let trailer = try await context.requestTrailers()?[.depotContentSHA256] else {
                throw DepotError(
                    .trailerMissing,
                    "The request announced \(DepotHeader.contentSHA256) in its Trailer field, but its body ended without that trailer (a proxy on the way may drop trailers). Nothing was stored; send the digest after the last chunk, or as a header."
                )
            }
            expected = try Self.digest(trailer, from: "trailer")
        }
        let model = parts.parts[0].upload
        let digest = try await model.finish()
        if let expected, expected != digest {
            throw DepotError(
                .digestMismatch,
                "The upload hashes to SHA-256 \(digest), but the client sent \(expected) in \(DepotHeader.contentSHA256): the file changed in transit. Nothing was stored; upload again."
            )
        }
        var files: [CompanionFile] = []
        for part in parts.parts.dropFirst() {
            let file = part.file!
            let computed = try await part.upload.finish()
            guard computed == file.sha256 else {
                throw DepotError(
                    .digestMismatch,
                    "Companion file '\(file.name)' hashes to SHA-256 \(computed), but \(DepotHeader.companionFiles) says \(file.sha256): the file changed in transit. Nothing was stored; upload again."
                )
            }
            files.append(file)
        }
        let tflite = try await model.verify(policy: verificationPolicy)
        let notes = request.uri.queryParameters.get("notes").map { String($0) } ?? ""
        let verified = VerifiedUpload(
            sha256: digest, size: size - files.map(\.size).reduce(0, +), notes: notes, tflite: tflite, files: files,
            uploadedBy: context.principal?.id)
        let blobs = [(model, digest)] + parts.parts.dropFirst().map { ($0.upload, $0.file!.sha256) }
        return try await service.add(verified, blobs: blobs, to: name, publish: request.uri.queryParameters.get("publish") == "true")
    }

    private func announced(_ request: Request) throws -> Announced {
        var announced = Announced()
        if let header = request.headers[.depotContentSHA256] {
            announced.digest = try Self.digest(header, from: "header")
        } else if let trailer = request.headers[.trailer] {
            announced.digestInTrailer = trailer.split(separator: ",").contains {
                $0.trimmingCharacters(in: .whitespaces).caseInsensitiveCompare(DepotHeader.contentSHA256) == .orderedSame
            }
        }
        if let header = request.headers[.depotContentLength] {
            guard let size = Int(header), size >= 0 else {
                throw DepotError(.badRequest, "\(DepotHeader.contentLength) '\(header.prefix(80))' is not a number of bytes.")
            }
            announced.size = size
        }
        return announced
    }

    /// A digest sent in `Depot-Content-SHA256`, lower-cased.
    private static func digest(_ text: String, from place: String) throws -> String {
        let digest = text.lowercased()
        guard digest.count == 64, digest.allSatisfy(\.isHexDigit) else {
            throw DepotError(.badRequest, "\(DepotHeader.contentSHA256) \(place) '\(text.prefix(80))' is not 64 hexadecimal digits.")
        }
        return digest
    }

    /// - Parameter received: The bytes received, or `nil` when more than announced arrived (refused at once).
    private func sizeMismatch(announced: Int, received: Int?) -> DepotError {
        DepotError(
            .sizeMismatch,
            "The upload has \(received.map(String.init) ?? "more than \(announced)") bytes, but the client sent \(announced) in \(DepotHeader.contentLength): the body was cut or the file changed in transit. Nothing was stored; upload again."
        )
    }

    /// - Parameter announced: The size the client announced, or `nil` when more than the limit
    ///   arrived (or the announced size is past Int's range).
    private func tooLarge(announced: Int?) -> DepotError {
        DepotError(
            .payloadTooLarge,
            "The upload has \(announced.map(String.init) ?? "more than \(maximumUploadSize)") bytes; this server accepts at most \(maximumUploadSize) (depot serve --max-upload-size). Nothing was stored."
        )
    }

    func list(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(ModelVersionList(versions: try await catalog.versions(of: try context.modelName())))
    }

    func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(try await catalog.version(try context.versionNumber(), of: try context.modelName()))
    }

    func patches(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (name, number) = (try context.modelName(), try context.versionNumber())
        _ = try await catalog.version(number, of: name)
        return try JSONResponse.make(
            VersionPatchList(
                patches: try await catalog.patches(to: number, of: name).map {
                    VersionPatch(
                        fromVersion: $0.fromVersion, file: $0.file.isEmpty ? nil : $0.file, fromSha256: $0.fromSha256, sha256: $0.sha256,
                        size: $0.size)
                }))
    }

    func setPublished(_ published: Bool, _ request: Request, _ context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(try await service.setPublished(published, version: try context.versionNumber(), of: try context.modelName()))
    }

    func delete(_ request: Request, context: AppRequestContext) async throws -> Response {
        try await service.delete(try context.versionNumber(), of: try context.modelName(), logger: context.logger)
        return Response(status: .noContent)
    }
}
