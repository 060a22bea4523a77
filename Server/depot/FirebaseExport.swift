import Foundation
import ModelDepotShared

/// What a Firebase project hands out for its custom models, read into one entry per model: the
/// folder the console's "Get command for bulk download" writes (`hosted_models/`, one
/// `<display name>.tflite` per model) and/or the Firebase ML API's `Model` resources saved as JSON
/// (`projects.models.list`'s answer, a list of them, or one).
///
/// With the JSON, it says which models there are, their tags and whether they were published;
/// each one's file is `<displayName>.tflite` in the folder, or the file its `tfliteModel.gcsTfliteUri`
/// names. Without it, every `.tflite` file in the folder is a published model named after the
/// file, since the folder says nothing more.
struct FirebaseExport {
    /// One Firebase model and what becomes of it.
    struct Entry: Equatable {
        /// Its display name in Firebase.
        var displayName: String
        /// Its resource name (`projects/<project>/models/<id>`), when the JSON gave it.
        var resource: String?
        var tags: [String]
        var published: Bool
        var modelHash: String?
        /// The model file, when one was found.
        var file: String?
        /// The ModelDepot name, or why there is none.
        var name: Result<ModelName, DepotError>
    }

    /// The fields of the API's `Model` resource the import reads.
    struct Resource: Decodable {
        struct State: Decodable { var published: Bool? }
        struct TFLite: Decodable { var gcsTfliteUri: String? }
        var name: String? = nil
        var displayName: String
        var tags: [String]? = nil
        var state: State? = nil
        var modelHash: String? = nil
        var tfliteModel: TFLite? = nil
    }

    private struct ResourceList: Decodable { var models: [Resource] }

    let entries: [Entry]
    /// `.tflite` files in the folder that no resource of the JSON names.
    let unlisted: [String]

    /// - Throws: ``DepotError`` (`bad_request`) when the folder cannot be listed or the JSON is
    ///   not `Model` resources, naming what is wrong.
    init(folder: String?, resources json: String?) throws(DepotError) {
        let directory = folder ?? json.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path } ?? "."
        let files = try Self.modelFiles(in: directory)
        // Without the JSON, each file stands for a published model named after it.
        let resources =
            try json.map { path throws(DepotError) in try Self.resources(in: path) }
            ?? files.map { file in
                Resource(
                    displayName: URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent, state: .init(published: true),
                    tfliteModel: .init(gcsTfliteUri: file))
            }
        let byName = Dictionary(files.map { (URL(fileURLWithPath: $0).lastPathComponent, $0) }, uniquingKeysWith: { first, _ in first })
        var sharing: [String: Int] = [:]
        for resource in resources { sharing[resource.displayName.lowercased(), default: 0] += 1 }
        var used: Set<String> = []
        entries = resources.map { resource in
            let candidates = [
                resource.displayName + ".tflite", resource.tfliteModel?.gcsTfliteUri.map { URL(fileURLWithPath: $0).lastPathComponent },
            ]
            let file = candidates.compactMap { $0 }.lazy.compactMap { byName[$0] }.first
            if let file { used.insert(file) }
            return Entry(
                displayName: resource.displayName, resource: resource.name, tags: resource.tags ?? [],
                published: resource.state?.published ?? false, modelHash: resource.modelHash, file: file,
                name: Self.name(for: resource.displayName, sharedBy: sharing[resource.displayName.lowercased(), default: 0]))
        }
        unlisted = files.filter { !used.contains($0) }
    }

    private static func modelFiles(in directory: String) throws(DepotError) -> [String] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw DepotError(
                .badRequest,
                "Could not list the folder '\(directory)': \(error.localizedDescription). Give the folder the bulk download wrote (hosted_models)."
            )
        }
        return names.filter { $0.lowercased().hasSuffix(".tflite") }.sorted().map {
            URL(fileURLWithPath: directory).appendingPathComponent($0).path
        }
    }

    private static func resources(in path: String) throws(DepotError) -> [Resource] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw DepotError(.badRequest, "Could not read '\(path)': \(error.localizedDescription).")
        }
        let decoder = JSONDecoder()
        if let list = try? decoder.decode(ResourceList.self, from: data) { return list.models }
        if let list = try? decoder.decode([Resource].self, from: data) { return list }
        do {
            return [try decoder.decode(Resource.self, from: data)]
        } catch {
            throw DepotError(
                .badRequest,
                "'\(path)' holds no Firebase ML Model resources ({\"models\": [...]}, a list of them, or one, each with a displayName): \(error)."
            )
        }
    }

    /// A display name's ModelDepot name: the display name in lower case, when that is a valid name
    /// no other Firebase model maps to.
    private static func name(for displayName: String, sharedBy count: Int) -> Result<ModelName, DepotError> {
        Result { () throws(DepotError) -> ModelName in
            let lowered = displayName.lowercased()
            let name = try ModelName(lowered)
            guard count == 1 else {
                throw DepotError(
                    .conflict,
                    "Several Firebase models become '\(lowered)' in lower case; rename all but one in Firebase (or the files) and import again."
                )
            }
            return name
        }
    }
}
