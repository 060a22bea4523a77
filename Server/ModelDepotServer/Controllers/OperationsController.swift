import Foundation
import Hummingbird
import ModelDepotShared

/// `/healthz`, `/readyz`, `/metrics`, `/openapi.yaml`: for operators and tools, no key needed.
struct OperationsController {
    let catalog: any ModelCatalog
    /// The object store blobs are kept in, when they are.
    let objects: S3BlobStore?
    let storageDirectory: String
    let metrics: ServerMetrics

    func register(in router: some RouterMethods<AppRequestContext>) {
        router.get("healthz") { _, _ in try JSONResponse.make(["status": "ok"]) }
        router.get("readyz", use: ready)
        router.get("metrics") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                     body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
        router.get("openapi.yaml") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                     body: .init(byteBuffer: ByteBuffer(bytes: try Self.openAPIDocument())))
        }
    }

    /// Ready when the catalog answers, the object store (if any) lists its blobs, and the
    /// storage directory takes writes.
    func ready(_ request: Request, context: AppRequestContext) async throws -> Response {
        do {
            _ = try await catalog.models()
        } catch {
            return try notReady("The catalog database does not answer.", cause: error, context: context)
        }
        if let objects {
            do {
                _ = try await objects.client.list(prefix: objects.blobKey(""), pageSize: 1)
            } catch {
                return try notReady("The object store does not answer.", cause: error, context: context)
            }
        }
        let probe = storageDirectory + "/tmp/.ready-\(UUID().uuidString)"
        guard FileManager.default.createFile(atPath: probe, contents: Data()) else {
            return try notReady("The storage directory does not take writes.", cause: "could not create \(probe): \(String(cString: strerror(errno)))",
                                context: context)
        }
        try? FileManager.default.removeItem(atPath: probe)
        return try JSONResponse.make(["status": "ready"])
    }

    /// A `503` naming what is wrong, without paths or system errors: those go to the log.
    private func notReady(_ message: String, cause: Any, context: AppRequestContext) throws -> Response {
        context.logger.error("not ready: \(message)", metadata: ["cause": "\(cause)"])
        return try JSONResponse.make(ErrorBody(error: DepotError(.unavailable, message + " The server's log names the cause.")),
                                     status: .serviceUnavailable)
    }

    static func openAPIDocument() throws -> Data {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml") else {
            throw DepotError(.internalError, "openapi.yaml is missing from the server's resources.")
        }
        return try Data(contentsOf: url)
    }
}
