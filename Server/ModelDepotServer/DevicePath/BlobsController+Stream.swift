import Foundation
import Hummingbird
import ModelDepotRollouts
import ModelDepotShared

extension BlobsController {
    /// A blob in the object store streamed through, with the status and headers the index
    /// planned; it counts as a download once its last byte went out. (Redirected downloads
    /// count when their range reaches the last byte: the device sends its range there.)
    func stream(
        _ hex: String, read: @Sendable (String, ClosedRange<Int>, Int) async throws -> BlobByteStream,
        status: HTTPResponse.Status, headers: HTTPFields, range: ClosedRange<Int>?, length: Int,
        includeBody: Bool, arm: CountedArm
    ) async throws -> Response {
        guard includeBody, let range else { return Response(status: status, headers: headers) }
        let body = try await read(hex, range, length)
        metrics.recordBlobBytes(range.count)
        return Response(
            status: status, headers: headers,
            body: ResponseBody { writer in
                for try await chunk in body { try await writer.write(chunk) }
                try await writer.finish(nil)
                countDownload(hex, range: range, length: length, arm: arm)
            })
    }
}
