import Foundation
import ModelDepotShared
import NIOCore

/// What a client says of an upload before its body: the file's digest (or that the digest
/// follows as a trailer), the model's size, the companion files after it, and what to do with
/// the version.
struct AnnouncedUpload: Sendable {
    var model: ModelName
    /// The model's SHA-256, lower-case.
    var digest: String?
    /// Whether the digest comes as a trailer after the body.
    var digestInTrailer = false
    /// The model's size in bytes (needed with companion files).
    var size: Int?
    /// The request's `Content-Length`: `Int.max` for one past Int's range.
    var contentLength: Int?
    var files: [CompanionFile] = []
    var notes = ""
    var publish = false
    /// The admin token that uploads.
    var uploadedBy: String?

    /// A digest sent as a header or trailer, lower-cased.
    /// - Throws: ``DepotError`` (`bad_request`) for anything but 64 hexadecimal digits.
    static func digest(_ text: String, from place: String) throws -> String {
        let digest = text.lowercased()
        guard digest.isSHA256Hex else {
            throw DepotError(.badRequest, "\(DepotHeader.contentSHA256) \(place) '\(text.prefix(80))' is not 64 hexadecimal digits.")
        }
        return digest
    }
}

/// Turns an announced body into a verified version: streams it to the store, hashing as it
/// arrives (the model, then any companion files), checks the announced sizes and digests and the
/// TFLite structure, and only then stores version N+1 with its files. Nothing is stored from a
/// refused upload.
struct UploadService {
    let catalog: any ModelCatalog
    let blobs: any BlobStore
    let versions: VersionService
    let metrics: ServerMetrics
    let maximumUploadSize: Int
    let verificationPolicy: TFLiteVerificationPolicy

    /// - Parameters:
    ///   - body: The request's body.
    ///   - trailer: The digest trailer's text once the body has ended, or `nil` when none came.
    func upload(
        _ announced: AnnouncedUpload, body: some AsyncSequence<ByteBuffer, any Error>,
        trailer: @Sendable () async throws -> String?
    ) async throws -> ModelVersion {
        if !announced.files.isEmpty, announced.size == nil {
            throw DepotError(
                .badRequest,
                "An upload with \(DepotHeader.companionFiles) needs \(DepotHeader.contentLength), the model's size, to tell the model's bytes from the files'."
            )
        }
        let companionBytes = announced.files.map(\.size).reduce(0, +)
        if let length = announced.contentLength, length > maximumUploadSize + companionBytes {
            throw tooLarge(announced: length == .max ? nil : length - companionBytes)
        }
        if let size = announced.size, size > maximumUploadSize { throw tooLarge(announced: size) }
        _ = try await catalog.model(announced.model)
        var uploads: [any BlobUpload] = []
        do {
            let model = try blobs.beginUpload()
            uploads.append(model)
            var parts = [UploadParts.Part(upload: model, size: announced.files.isEmpty ? nil : announced.size, file: nil)]
            for file in announced.files {
                let upload = try blobs.beginUpload()
                uploads.append(upload)
                parts.append(UploadParts.Part(upload: upload, size: file.size, file: file))
            }
            let version = try await receive(body, trailer: trailer, into: UploadParts(parts), announced: announced)
            metrics.recordUpload(stored: true)
            return version
        } catch {
            for upload in uploads { await upload.discard() }
            metrics.recordUpload(stored: false)
            throw error
        }
    }

    /// Verifies a finished upload's TFLite structure where it lies, reading only what the
    /// verifier needs, on a thread of its own (``DedicatedThread``).
    static func verify(_ upload: any BlobUpload, policy: TFLiteVerificationPolicy) async throws(DepotError) -> TFLiteModelDescription {
        switch await upload.finishedBytes() {
        case .file(let path):
            return try await DedicatedThread.run { () throws(DepotError) in
                try MappedFile(path: path).withBytes { bytes throws(DepotError) in try TFLiteVerifier(policy: policy).verify(bytes) }
            }
        case .paged(let pages):
            return try await DedicatedThread.run { () throws(DepotError) in try TFLiteVerifier(policy: policy).verify(pages) }
        }
    }

    private func receive(
        _ body: some AsyncSequence<ByteBuffer, any Error>, trailer: @Sendable () async throws -> String?, into parts: UploadParts,
        announced: AnnouncedUpload
    ) async throws -> ModelVersion {
        var parts = parts
        var size = 0
        let companionBytes = parts.parts.dropFirst().compactMap(\.size).reduce(0, +)
        for try await buffer in body {
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
            guard let text = try await trailer() else {
                throw DepotError(
                    .trailerMissing,
                    "The request announced \(DepotHeader.contentSHA256) in its Trailer field, but its body ended without that trailer (a proxy on the way may drop trailers). Nothing was stored; send the digest after the last chunk, or as a header."
                )
            }
            expected = try AnnouncedUpload.digest(text, from: "trailer")
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
            guard let file = part.file else { continue }
            let computed = try await part.upload.finish()
            guard computed == file.sha256 else {
                throw DepotError(
                    .digestMismatch,
                    "Companion file '\(file.name)' hashes to SHA-256 \(computed), but \(DepotHeader.companionFiles) says \(file.sha256): the file changed in transit. Nothing was stored; upload again."
                )
            }
            files.append(file)
        }
        let tflite = try await Self.verify(model, policy: verificationPolicy)
        let verified = VerifiedUpload(
            sha256: digest, size: size - files.map(\.size).reduce(0, +), notes: announced.notes, tflite: tflite, files: files,
            uploadedBy: announced.uploadedBy)
        let blobs = [(model, digest)] + parts.parts.dropFirst().compactMap { part in part.file.map { (part.upload, $0.sha256) } }
        return try await versions.add(verified, blobs: blobs, to: announced.model, publish: announced.publish)
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
}
