import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// Brings one Firebase model (``FirebaseExport/Entry``) into ModelDepot through the admin API,
/// whole or not at all: its file checked here first, the model created with its tags, the file
/// uploaded as version 1, published and made the rollout's default when it was published in
/// Firebase. A model already holding that file is left as it is; anything that fails after the
/// model was created deletes it again.
struct FirebaseImport {
    /// What became of one Firebase model.
    struct Result: Encodable {
        var firebaseModel: String
        var resource: String?
        var model: String?
        var file: String?
        var sha256: String?
        var version: Int?
        var published: Bool
        /// Whether the model is (or, in a dry run, would be) in ModelDepot with its file.
        var imported = false
        var outcome = ""
    }

    let client: AdminClient
    let dryRun: Bool

    /// - Throws: ``DepotError`` when the server cannot be reached or refuses the token: nothing
    ///   more can be imported then.
    func run(_ entry: FirebaseExport.Entry) async throws -> Result {
        var result = Result(firebaseModel: entry.displayName, resource: entry.resource, file: entry.file, published: entry.published)
        do {
            let name = try entry.name.get()
            result.model = name.rawValue
            guard let file = entry.file else {
                throw DepotError(.notFound, "no file for it: expected \(entry.displayName).tflite in the folder the bulk download wrote")
            }
            let inspection = try TFLiteInspection(fileAt: file)
            result.sha256 = inspection.sha256
            if case .failure(let error) = inspection.result {
                throw DepotError(error.code, "not a valid TFLite model (\(error.code)): \(error.message)")
            }
            if let version = try await existingVersion(of: name, sha256: inspection.sha256) {
                result.version = version
                result.imported = true
                result.outcome = "already imported as version \(version); left as it is"
                return result
            }
            let what = entry.published ? "published, the rollout's default" : "not published"
            if dryRun {
                result.imported = true
                result.outcome = "would be created with version 1 (\(what))"
                return result
            }
            result.version = try await create(name, entry, file: file)
            result.imported = true
            result.outcome = "created with version \(result.version ?? 1) (\(what))"
        } catch let error as DepotError {
            if [.unavailable, .unauthorized, .forbidden, .internalError].contains(error.code) { throw error }
            result.outcome = error.message
        } catch {
            result.outcome = "\(error)"
        }
        return result
    }

    /// The version of `name` that holds the file; `nil` when there is no such model.
    /// - Throws: ``DepotError`` (`conflict`) when the model exists with other files only.
    private func existingVersion(of name: ModelName, sha256: String) async throws -> Int? {
        let versions: ModelVersionList
        do {
            versions = try await client.get("/v1/admin/models/\(name)/versions", as: ModelVersionList.self)
        } catch let error as DepotError where error.code == .notFound {
            return nil
        }
        if let match = versions.versions.first(where: { $0.sha256 == sha256 }) { return match.version }
        throw DepotError(
            .conflict,
            "'\(name)' exists with other files (\(versions.versions.count) versions); it was left as it is. Delete it, or rename the Firebase model's file, and import again."
        )
    }

    /// Creates the model, uploads its version and sets its rollout; deletes the model again when a step fails.
    private func create(_ name: ModelName, _ entry: FirebaseExport.Entry, file: String) async throws -> Int {
        let source = ["Imported from Firebase ML", entry.resource, entry.modelHash.map { "modelHash \($0)" }].compactMap { $0 }
        let creation = ModelCreation(name: name, description: source.joined(separator: ", "), tags: entry.tags.isEmpty ? nil : entry.tags)
        _ = try await client.post("/v1/admin/models", json: creation, as: ModelSummary.self)
        do {
            var query = URLComponents()
            query.queryItems = [
                URLQueryItem(name: "publish", value: entry.published ? "true" : "false"),
                URLQueryItem(name: "notes", value: source.joined(separator: ", ")),
            ]
            let version = try await client.upload(
                "/v1/admin/models/\(name)/versions?\(query.percentEncodedQuery ?? "")", file: file,
                as: ModelVersion.self
            ) { _, _ in }
            if entry.published {
                _ = try await client.put(
                    try Depot.Rollouts.path(name.rawValue, "/default"), json: RolloutVersionChoice(version: version.version),
                    as: Rollout.self)
            }
            return version.version
        } catch {
            try? await client.delete("/v1/admin/models/\(name)?force=true")
            throw error
        }
    }
}
