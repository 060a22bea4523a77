import Foundation
import Hummingbird
import Logging
import ModelDepotShared

/// `/v1/admin/models/{name}/versions`: streamed uploads, listing, publishing, deletion.
struct VersionsController {
    let catalog: any ModelCatalog
    let service: VersionService
    let uploads: UploadService

    func register(in group: RouterGroup<AppRequestContext>) {
        group.post("models/:name/versions", use: upload)
        group.get("models/:name/versions", use: list)
        group.get("models/:name/versions/:number", use: show)
        group.get("models/:name/versions/:number/patches", use: patches)
        group.post("models/:name/versions/:number/publish") { try await setPublished(true, $0, $1) }
        group.post("models/:name/versions/:number/unpublish") { try await setPublished(false, $0, $1) }
        group.delete("models/:name/versions/:number", use: delete)
    }

    /// `POST …/versions`: the announced upload from the request's head, streamed through
    /// ``UploadService``; `201` with the version. The console's upload script sends the same request.
    static func upload(_ request: Request, context: AppRequestContext, with uploads: UploadService) async throws -> Response {
        let name = try context.modelName()
        let version = try await uploads.upload(try announced(request, model: name, by: context.principal?.id), body: request.body) {
            try await context.requestTrailers()?[.depotContentSHA256]
        }
        return try JSONResponse.make(
            version, status: .created, headers: [.location: "/v1/admin/models/\(name)/versions/\(version.version)"])
    }

    private func upload(_ request: Request, context: AppRequestContext) async throws -> Response {
        try await Self.upload(request, context: context, with: uploads)
    }

    private static func announced(_ request: Request, model: ModelName, by keyID: String?) throws -> AnnouncedUpload {
        var announced = AnnouncedUpload(model: model, uploadedBy: keyID)
        if let header = request.headers[.depotContentSHA256] {
            announced.digest = try AnnouncedUpload.digest(header, from: "header")
        } else if let trailer = request.headers[.trailer] {
            announced.digestInTrailer = trailer.split(separator: ",").contains {
                $0.trimmingCharacters(in: .whitespaces).caseInsensitiveCompare(DepotHeader.contentSHA256) == .orderedSame
            }
        }
        if let header = request.headers[.depotContentLength] {
            guard let size = Int(header), size >= 0 else {
                throw DepotError(.badRequest, "\(DepotHeader.contentLength) '\(header.prefix(80))' is not a number of bytes.")
            }
            announced.size = size
        }
        // A length past Int's range (the HTTP parser takes up to 2^64 - 1) is too large as well.
        announced.contentLength = request.headers[.contentLength].map { Int($0) ?? .max }
        announced.files =
            try request.headers[.depotCompanionFiles].map { header throws(DepotError) in try CompanionFile.files(fromHeader: header) } ?? []
        announced.notes = request.uri.queryParameters.get("notes").map { String($0) } ?? ""
        announced.publish = request.uri.queryParameters.get("publish") == "true"
        return announced
    }

    func list(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(ModelVersionList(versions: try await catalog.versions(of: try context.modelName())))
    }

    func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(try await catalog.version(try context.versionNumber(), of: try context.modelName()))
    }

    func patches(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (name, number) = (try context.modelName(), try context.versionNumber())
        _ = try await catalog.version(number, of: name)
        return try JSONResponse.make(
            VersionPatchList(
                patches: try await catalog.patches(to: number, of: name).map {
                    VersionPatch(
                        fromVersion: $0.fromVersion, file: $0.file.isEmpty ? nil : $0.file, fromSha256: $0.fromSha256, sha256: $0.sha256,
                        size: $0.size)
                }))
    }

    func setPublished(_ published: Bool, _ request: Request, _ context: AppRequestContext) async throws -> Response {
        try JSONResponse.make(try await service.setPublished(published, version: try context.versionNumber(), of: try context.modelName()))
    }

    func delete(_ request: Request, context: AppRequestContext) async throws -> Response {
        try await service.delete(try context.versionNumber(), of: try context.modelName(), logger: context.logger)
        return Response(status: .noContent)
    }
}
