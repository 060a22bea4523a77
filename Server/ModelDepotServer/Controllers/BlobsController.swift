import Foundation
import Hummingbird
import ModelDepotShared
import NIOCore

/// `GET|HEAD /v1/blobs/sha256/{hex}`: immutable model files with single byte ranges,
/// `If-Range`, strong ETags and year-long caching, streamed from disk.
struct BlobsController {
    let blobs: any BlobStore
    let metrics: ServerMetrics
    let usage: UsageCounter
    let files = BlobFileBody()

    func register(in group: RouterGroup<AppRequestContext>) {
        group.get("blobs/sha256/:hex") { try await serve($0, $1, includeBody: true) }
        group.head("blobs/sha256/:hex") { try await serve($0, $1, includeBody: false) }
    }

    func serve(_ request: Request, _ context: AppRequestContext, includeBody: Bool) async throws -> Response {
        let hex = context.parameters.get("hex") ?? ""
        guard hex.utf8.count == 64, hex.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            throw DepotError(.badRequest, "'\(hex.prefix(80))' is not a SHA-256 digest: blobs are named by 64 lower-case hexadecimal digits.")
        }
        guard let path = blobs.path(of: hex), let length = Self.size(of: path) else {
            throw DepotError(.notFound, "No blob has SHA-256 \(hex). Ask the model's manifest for the current download URL.")
        }
        let etag = "\"\(hex)\""
        let arm = request.headers[.depotArm].map { String($0.prefix(80)) } ?? "unknown"
        var headers: HTTPFields = [
            .eTag: etag, .cacheControl: "public, max-age=31536000, immutable", .acceptRanges: "bytes",
            .contentType: "application/octet-stream",
        ]
        let range = EntityTag.ifRange(request.headers[.ifRange], matches: etag)
            ? ByteRange(header: request.headers[.range], length: length) : .full
        switch range {
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(length)"
            let error = DepotError(.rangeNotSatisfiable, "The range '\(request.headers[.range] ?? "")' lies outside the blob's \(length) bytes.")
            var response = try error.response(from: request, context: context)
            response.headers.append(contentsOf: headers.filter { $0.name != .contentType && $0.name != .cacheControl })
            return response
        case .full:
            headers[.contentLength] = String(length)
            return response(.ok, path: path, range: length > 0 ? 0...(length - 1) : nil, headers: headers, includeBody: includeBody,
                            eventLoop: context.eventLoop, sha256: hex, length: length, arm: arm)
        case .partial(let bytes):
            headers[.contentRange] = "bytes \(bytes.lowerBound)-\(bytes.upperBound)/\(length)"
            headers[.contentLength] = String(bytes.count)
            return response(.partialContent, path: path, range: bytes, headers: headers, includeBody: includeBody,
                            eventLoop: context.eventLoop, sha256: hex, length: length, arm: arm)
        }
    }

    private func response(_ status: HTTPResponse.Status, path: String, range: ClosedRange<Int>?, headers: HTTPFields,
                          includeBody: Bool, eventLoop: (any EventLoop)?, sha256: String, length: Int, arm: String) -> Response {
        guard includeBody, let range else { return Response(status: status, headers: headers) }
        metrics.recordBlobBytes(range.count)
        return Response(status: status, headers: headers, body: files.body(path: path, range: range, eventLoop: eventLoop) {
            // A download counts once its last byte went out (a whole file or a resumed tail).
            if range.upperBound == length - 1 { usage.record(.download(sha256: sha256), arm: arm) }
        })
    }

    private static func size(of path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
    }
}
