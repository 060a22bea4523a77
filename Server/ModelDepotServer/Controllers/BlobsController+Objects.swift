import Foundation
import Hummingbird
import ModelDepotShared

extension BlobsController {
    /// A blob in the object store: a `307` to a pre-signed URL of it (`--blob-redirect`; the
    /// device sends its range there), or its bytes streamed through with the status and headers
    /// the index planned. A redirect whose range reaches the last byte counts as a download, as
    /// a streamed answer does once its last byte went out.
    func serveObject(_ hex: String, from objects: S3BlobStore, status: HTTPResponse.Status, headers: HTTPFields,
                     range: ClosedRange<Int>?, length: Int, includeBody: Bool, arm: String) async throws -> Response {
        if let lifetime = objects.redirectLifetime {
            if includeBody, let range { countDownload(hex, range: range, length: length, arm: arm) }
            return Response(status: .temporaryRedirect, headers: [
                .location: objects.presignedURL(hex, lifetime: lifetime), .cacheControl: "no-store", .eTag: "\"\(hex)\"",
            ])
        }
        guard includeBody, let range else { return Response(status: status, headers: headers) }
        let body = try await objects.stream(hex, range: range, size: length)
        metrics.recordBlobBytes(range.count)
        return Response(status: status, headers: headers, body: ResponseBody { writer in
            for try await chunk in body { try await writer.write(chunk) }
            try await writer.finish(nil)
            countDownload(hex, range: range, length: length, arm: arm)
        })
    }
}
