import Foundation
import Hummingbird
import ModelDepotShared
import NIOCore

/// `GET|HEAD /v1/blobs/sha256/{hex}`: immutable model files with single byte ranges,
/// `If-Range`, strong ETags and year-long caching, streamed from disk.
///
/// The router answers every request; ``HotPathHandler`` answers a `GET` the same way before the
/// router when the key is cached, and sends the bytes with `sendfile`.
struct BlobsController {
    static let route = "/v1/blobs/sha256/{hex}"

    /// What a request gets: the content (or a part of it), or a `416`.
    enum Plan {
        case content(status: HTTPResponse.Status, headers: HTTPFields, path: String, range: ClosedRange<Int>?, length: Int)
        case unsatisfiable(headers: HTTPFields, error: DepotError)
    }

    let index: BlobIndex
    let metrics: ServerMetrics
    let usage: UsageCounter
    let files = BlobFileBody()

    func register(in group: RouterGroup<AppRequestContext>) {
        group.get("blobs/sha256/:hex") { try await serve($0, $1, includeBody: true) }
        group.head("blobs/sha256/:hex") { try await serve($0, $1, includeBody: false) }
    }

    func serve(_ request: Request, _ context: AppRequestContext, includeBody: Bool) async throws -> Response {
        let hex = context.parameters.get("hex") ?? ""
        switch try plan(hex: Substring(hex), key: try context.requirePrincipal(), headers: request.headers) {
        case .unsatisfiable(let headers, let error):
            var response = try error.response(from: request, context: context)
            response.headers.append(contentsOf: headers)
            return response
        case .content(let status, let headers, let path, let range, let length):
            let arm = Self.arm(request.headers)
            try Self.checkFile(path, hex: hex, length: length)
            guard includeBody, let range else { return Response(status: status, headers: headers) }
            metrics.recordBlobBytes(range.count)
            return Response(status: status, headers: headers, body: files.body(path: path, range: range, eventLoop: context.eventLoop) {
                countDownload(hex, range: range, length: length, arm: arm)
            })
        }
    }

    /// A `GET` answered from the file with `sendfile`, or `nil` for anything but content (the
    /// router then answers it, with the same result or the error).
    func cachedAnswer(hex: Substring, key: AccessKey, headers: HTTPFields) -> HotAnswer? {
        guard case .content(let status, let fields, let path, let range?, let length)? = try? plan(hex: hex, key: key, headers: headers) else {
            return nil
        }
        let arm = Self.arm(headers)
        let hex = String(hex)
        return HotAnswer(status: status, headers: fields, file: path, size: length, range: range) { [metrics] in
            metrics.recordBlobBytes(range.count)
        } onComplete: {
            countDownload(hex, range: range, length: length, arm: arm)
        }
    }

    /// Status, headers and byte range for `key`'s request of blob `hex`, from the ``BlobIndex``.
    /// - Throws: ``DepotError``: `bad_request` for a malformed digest, `not_found` for a blob no
    ///   version of the key's models references, `internal_error` for a referenced blob missing
    ///   from storage.
    func plan(hex: Substring, key: AccessKey, headers requestHeaders: HTTPFields) throws -> Plan {
        guard hex.utf8.count == 64, hex.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            throw DepotError(.badRequest, "'\(hex.prefix(80))' is not a SHA-256 digest: blobs are named by 64 lower-case hexadecimal digits.")
        }
        // A blob of another model is as unknown to a limited key as one nobody uploaded.
        guard let entry = index.entry(hex), BlobIndex.key(key, mayRead: entry) else {
            throw DepotError(.notFound, "No blob has SHA-256 \(hex). Ask the model's manifest for the current download URL.")
        }
        guard let path = entry.path else {
            throw DepotError(.internalError, "Blob \(hex), which versions of \(entry.models.sorted().joined(separator: ", ")) reference, is missing from the storage directory. Restore it from a backup; 'depot fsck' lists every damaged blob.")
        }
        let length = entry.size
        let etag = "\"\(hex)\""
        var headers: HTTPFields = [
            .eTag: etag, .cacheControl: "public, max-age=31536000, immutable", .acceptRanges: "bytes",
            .contentType: "application/octet-stream",
        ]
        let range = EntityTag.ifRange(requestHeaders.value(.ifRange), matches: etag)
            ? ByteRange(header: requestHeaders.value(.range), length: length) : .full
        switch range {
        case .unsatisfiable:
            let error = DepotError(.rangeNotSatisfiable, "The range '\(requestHeaders.value(.range) ?? "")' lies outside the blob's \(length) bytes.")
            return .unsatisfiable(headers: [.eTag: etag, .acceptRanges: "bytes", .contentRange: "bytes */\(length)"], error: error)
        case .full:
            headers[.contentLength] = String(length)
            return .content(status: .ok, headers: headers, path: path, range: length > 0 ? 0...(length - 1) : nil, length: length)
        case .partial(let bytes):
            headers[.contentRange] = "bytes \(bytes.lowerBound)-\(bytes.upperBound)/\(length)"
            headers[.contentLength] = String(bytes.count)
            return .content(status: .partialContent, headers: headers, path: path, range: bytes, length: length)
        }
    }

    /// A download counts once its last byte went out (a whole file or a resumed tail).
    private func countDownload(_ hex: String, range: ClosedRange<Int>, length: Int, arm: String) {
        if range.upperBound == length - 1 { usage.record(.download(sha256: hex), arm: arm) }
    }

    private static func arm(_ headers: HTTPFields) -> String {
        headers.value(.depotArm).map { String($0.prefix(80)) } ?? "unknown"
    }

    /// Refuses to serve a blob file whose size is not the one its versions were stored with:
    /// changed or cut on disk, it would go out as wrong bytes under a `200`.
    static func checkFile(_ path: String, hex: String, length: Int) throws {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw DepotError(.internalError, "Blob \(hex) is missing from the storage directory ('\(path)': \(String(cString: strerror(errno)))). Restore it from a backup; 'depot fsck' lists every damaged blob.")
        }
        guard Int(status.st_size) == length else {
            throw DepotError(.internalError, "Blob \(hex) ('\(path)') has \(status.st_size) bytes on disk but was stored with \(length): it was changed outside the server. Restore it from a backup; 'depot fsck' lists every damaged blob.")
        }
    }
}
