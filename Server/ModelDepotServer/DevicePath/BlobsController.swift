import Crypto
import Foundation
import Hummingbird
import ModelDepotRollouts
import ModelDepotShared
import NIOCore

/// `GET|HEAD /v1/blobs/sha256/{hex}`: immutable model files with single byte ranges,
/// `If-Range`, strong ETags and year-long caching, streamed from disk.
///
/// The router answers every request; ``FastPathHandler`` answers a `GET` the same way before the
/// router when the key is cached, and sends the bytes with `sendfile`.
struct BlobsController {
    static let route = "/v1/blobs/sha256/{hex}"

    /// What a request gets: the content (or a part of it), or a `416`.
    enum Plan {
        case content(status: HTTPResponse.Status, headers: HTTPFields, file: BlobIndex.Entry, range: ClosedRange<Int>?, length: Int)
        case unsatisfiable(headers: HTTPFields, error: DepotError)
    }

    let index: BlobIndex
    /// How the store the server runs with delivers a blob's bytes.
    let delivery: BlobDelivery
    let metrics: ServerMetrics
    let usage: UsageCounter
    /// Checks the arm token of the download URL (``ArmToken``).
    let signer: ManifestSigner
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
        case .content(let status, let headers, let file, let range, let length):
            let arm = signer.countedArm(query: request.uri.query.map { $0[...] }, sha256: Substring(hex))
            switch delivery {
            case .stream(let read):
                return try await stream(
                    hex, read: read, status: status, headers: headers, range: range, length: length,
                    includeBody: includeBody, arm: arm)
            case .redirect(let url):
                if includeBody, let range { countDownload(hex, range: range, length: length, arm: arm) }
                return Response(status: .temporaryRedirect, headers: [.location: url(hex), .cacheControl: "no-store", .eTag: "\"\(hex)\""])
            case .file:
                break
            }
            let path = try checkFile(file, hex: hex)
            guard includeBody, let range else { return Response(status: status, headers: headers) }
            metrics.recordBlobBytes(range.count)
            return Response(
                status: status, headers: headers,
                body: files.body(path: path, range: range, eventLoop: context.eventLoop) {
                    countDownload(hex, range: range, length: length, arm: arm)
                })
        }
    }

    /// A `GET` answered from the file with `sendfile`, or `nil` for anything but content (the
    /// router then answers it, with the same result or the error). `query` is the target's raw
    /// query (after `?`), which carries the arm token.
    func fastAnswer(hex: Substring, query: Substring?, key: AccessKey, headers: some DeviceFields) -> FastPathAnswer? {
        guard case .content(let status, let fields, let file, let range?, let length)? = try? plan(hex: hex, key: key, headers: headers),
            let path = file.path
        else {
            return nil
        }
        let arm = signer.countedArm(query: query, sha256: hex)
        let hex = String(hex)
        return FastPathAnswer(status: status, headers: fields, file: path, identity: file.identity, range: range) { [metrics] in
            metrics.recordBlobBytes(range.count)
        } onComplete: {
            countDownload(hex, range: range, length: length, arm: arm)
        }
    }

    /// Status, headers and byte range for `key`'s request of blob `hex`, from the ``BlobIndex``.
    /// - Throws: ``DepotError``: `bad_request` for a malformed digest, `not_found` for a blob no
    ///   version of the key's models references.
    func plan(hex: Substring, key: AccessKey, headers requestHeaders: some DeviceFields) throws -> Plan {
        guard hex.isSHA256Hex else {
            throw DepotError(
                .badRequest, "'\(hex.prefix(80))' is not a SHA-256 digest: blobs are named by 64 lower-case hexadecimal digits.")
        }
        // A blob of another model is as unknown to a limited key as one nobody uploaded.
        guard let entry = index.entry(hex), BlobIndex.key(key, mayRead: entry) else {
            throw DepotError(.notFound, "No blob has SHA-256 \(hex). Ask the model's manifest for the current download URL.")
        }
        let length = entry.size
        let etag = "\"\(hex)\""
        var headers: HTTPFields = [
            .eTag: etag, .cacheControl: "public, max-age=31536000, immutable", .acceptRanges: "bytes",
            .contentType: "application/octet-stream",
        ]
        let range =
            EntityTag.ifRange(requestHeaders[device: .ifRange], matches: etag)
            ? ByteRange(header: requestHeaders[device: .range], length: length) : .full
        switch range {
        case .unsatisfiable:
            let error = DepotError(
                .rangeNotSatisfiable, "The range '\(requestHeaders[device: .range] ?? "")' lies outside the blob's \(length) bytes.")
            return .unsatisfiable(headers: [.eTag: etag, .acceptRanges: "bytes", .contentRange: "bytes */\(length)"], error: error)
        case .full:
            headers[.contentLength] = String(length)
            return .content(status: .ok, headers: headers, file: entry, range: length > 0 ? 0...(length - 1) : nil, length: length)
        case .partial(let bytes):
            headers[.contentRange] = "bytes \(bytes.lowerBound)-\(bytes.upperBound)/\(length)"
            headers[.contentLength] = String(bytes.count)
            return .content(status: .partialContent, headers: headers, file: entry, range: bytes, length: length)
        }
    }

    /// A download counts once its last byte went out (a whole file or a resumed tail), for the
    /// arm its URL's token names (``ArmToken``).
    func countDownload(_ hex: String, range: ClosedRange<Int>, length: Int, arm: CountedArm) {
        if range.upperBound == length - 1 { usage.record(.download(sha256: hex), arm: arm) }
    }

    /// Refuses to serve a blob file that is not the one the index knows (missing, rewritten,
    /// replaced or cut on disk) unless it hashes to its digest again (restored from a backup):
    /// it could go out as wrong bytes under a `200`.
    /// - Returns: The file's path.
    func checkFile(_ entry: BlobIndex.Entry, hex: String) throws -> String {
        guard let path = entry.path else {
            throw DepotError(.internalError, "Blob \(hex) has no local file: this server keeps blobs in an object store.")
        }
        guard let identity = FileIdentity(path: path) else {
            throw DepotError(
                .internalError,
                "Blob \(hex) is missing from the storage directory ('\(path)'). Restore it from a backup; 'depot fsck' lists every damaged blob."
            )
        }
        guard identity != entry.identity else { return path }
        guard identity.size == entry.size, (try? SHA256.digest(ofFileAt: path).hex) == hex else {
            throw DepotError(
                .internalError,
                "Blob \(hex) ('\(path)', \(identity.size) bytes, \(entry.size) stored) was changed outside the server. Restore it from a backup; 'depot fsck' lists every damaged blob."
            )
        }
        index.confirm(hex, identity: identity)
        return path
    }
}
