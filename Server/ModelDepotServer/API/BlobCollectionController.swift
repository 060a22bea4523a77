import Hummingbird
import ModelDepotShared

/// `POST /v1/admin/blobs/collect` (`depot gc`): removes blobs no version references and abandoned
/// uploads now, instead of at the next periodic collection; `?dryRun=true` only lists them.
struct BlobCollectionController {
    let collector: BlobCollector

    func register(in group: RouterGroup<AppRequestContext>) {
        group.post("blobs/collect", use: collect)
    }

    func collect(_ request: Request, context: AppRequestContext) async throws -> Response {
        let dryRun = request.uri.queryParameters.get("dryRun") == "true"
        return try JSONResponse.make(try await collector.collect(dryRun: dryRun, wait: true))
    }
}
