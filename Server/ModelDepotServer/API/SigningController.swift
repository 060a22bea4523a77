import Foundation
import Hummingbird
import ModelDepotShared

/// Root documents and the online manifest key:
/// - `GET /v1/keys/root/{n}.json` (any key): root document N, exactly as signed.
/// - `GET /v1/admin/signing`: the active and pending manifest keys and the newest root version.
/// - `POST /v1/admin/signing/keys`: makes the pending key for the next rotation.
/// - `POST /v1/admin/signing/roots`: publishes root document N+1 (signed offline).
struct SigningController {
    let catalog: any ModelCatalog
    let signer: ManifestSigner
    let service: SigningService

    func registerPublic(in group: RouterGroup<AppRequestContext>) {
        group.get("keys/root/:file", use: root)
    }

    func registerAdmin(in group: RouterGroup<AppRequestContext>) {
        group.get("signing", use: status)
        group.post("signing/keys", use: makePendingKey)
        group.post("signing/roots", use: publishRoot)
    }

    func root(_ request: Request, context: AppRequestContext) async throws -> Response {
        let file = context.parameters.get("file") ?? ""
        guard file.hasSuffix(".json"), let version = Int(file.dropLast(5)), version >= 1, String(version) + ".json" == file else {
            throw DepotError(.badRequest, "'\(file.prefix(40))' is not a root document name; they are named 1.json, 2.json, …")
        }
        guard let envelope = try await catalog.rootDocument(version: version) else {
            let newest = signer.rootVersion.map { "the newest is v\($0)" } ?? "none is published yet ('depot keys root init')"
            throw DepotError(.notFound, "There is no root document v\(version); \(newest).")
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: "public, max-age=31536000, immutable"],
            body: .init(byteBuffer: ByteBuffer(bytes: envelope)))
    }

    func status(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(signer.status)
    }

    func makePendingKey(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(try await service.makePendingKey(), status: .created)
    }

    func publishRoot(_ request: Request, context: AppRequestContext) async throws -> Response {
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: TrustedRoot.maximumSize)
        } catch {
            throw DepotError(.payloadTooLarge, "A root document may be at most \(TrustedRoot.maximumSize) bytes.")
        }
        let document: RootDocument
        do {
            document = try await service.publishRoot(Data(body.readableBytesView))
        } catch let error as DepotError
            where [
                .unsignedManifest, .invalidMetadata, .untrustedRoot, .duplicateSignature,
                .invalidSignature, .metadataTooLarge,
            ].contains(error.code)
        {
            throw DepotError(
                error.code == .metadataTooLarge ? .payloadTooLarge : .badRequest, "The root document was refused: \(error.message)")
        }
        return try JSONResponse.make(document, status: .created)
    }
}
