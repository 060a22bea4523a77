import Foundation
import Hummingbird
import ModelDepotShared

/// `/healthz`, `/readyz`, `/metrics`, `/openapi.yaml`: for operators and tools, no key needed.
struct OperationsController {
    let catalog: any ModelCatalog
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

    /// Ready when the catalog answers and the storage directory takes writes.
    func ready(_ request: Request, context: AppRequestContext) async throws -> Response {
        do {
            _ = try await catalog.models()
            let probe = storageDirectory + "/tmp/.ready-\(UUID().uuidString)"
            guard FileManager.default.createFile(atPath: probe, contents: Data()) else {
                throw DepotError(.unavailable, "The storage directory '\(storageDirectory)' does not take writes.")
            }
            try FileManager.default.removeItem(atPath: probe)
            return try JSONResponse.make(["status": "ready"])
        } catch {
            let message = (error as? DepotError)?.message ?? "\(error)"
            return try JSONResponse.make(ErrorBody(error: DepotError(.unavailable, message)), status: .serviceUnavailable)
        }
    }

    static func openAPIDocument() throws -> Data {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml") else {
            throw DepotError(.internalError, "openapi.yaml is missing from the server's resources.")
        }
        return try Data(contentsOf: url)
    }
}
