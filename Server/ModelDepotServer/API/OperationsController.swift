import Foundation
import Hummingbird
import ModelDepotShared

/// `/healthz`, `/readyz`, `/metrics`, `/openapi.yaml`: for operators and tools, no key needed.
struct OperationsController {
    let catalog: any ModelCatalog
    let blobs: any BlobStore
    let metrics: ServerMetrics

    func register(in router: some RouterMethods<AppRequestContext>) {
        router.get("healthz") { _, _ in try JSONResponse.make(["status": "ok", "version": modelDepotVersion]) }
        router.get("readyz", use: ready)
        router.get("metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
        router.get("openapi.yaml") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: try Self.openAPIDocument())))
        }
    }

    /// Ready when the catalog answers and the blob store takes writes (the storage directory)
    /// or lists its blobs (the object store).
    func ready(_ request: Request, context: AppRequestContext) async throws -> Response {
        do {
            _ = try await catalog.models()
        } catch {
            return try notReady("The catalog database does not answer.", cause: error, context: context)
        }
        do {
            try await blobs.checkReachable()
        } catch let error as DepotError {
            return try notReady(error.message, cause: error.cause ?? "", context: context)
        } catch {
            return try notReady("The blob store does not answer.", cause: error, context: context)
        }
        return try JSONResponse.make(["status": "ready"])
    }

    /// A `503` naming what is wrong, without paths or system errors: those go to the log.
    private func notReady(_ message: String, cause: Any, context: AppRequestContext) throws -> Response {
        context.logger.error("not ready: \(message)", metadata: ["cause": "\(cause)"])
        return try JSONResponse.make(
            ErrorBody(error: DepotError(.unavailable, message + " The server's log names the cause.")),
            status: .serviceUnavailable)
    }

    static func openAPIDocument() throws -> Data {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml") else {
            throw DepotError(.internalError, "openapi.yaml is missing from the server's resources.")
        }
        return try Data(contentsOf: url)
    }
}
