import Foundation
import ModelDepotShared

/// Verified models on disk, metadata next to each file so the two can't drift:
///
///     <cache>/models/<name>/v<version>-<sha256>/model.tflite
///     <cache>/models/<name>/v<version>-<sha256>/manifest.json
///     <cache>/models/<name>/current.json        the version in use, its manifest's ETag and expiry,
///                                                and when the server last confirmed it
///     <cache>/partial/<sha256>.part              a download in progress (survives restarts)
struct ModelCache: Sendable {
    /// What `current.json` holds.
    struct Current: Codable, Sendable {
        var directory: String
        var etag: String?
        /// When the newest manifest accepted for this version expires: a `304` after it is a freeze.
        var expires: Date?
        /// When the server last confirmed this version (a verified manifest for it, or a `304`).
        var confirmedAt: Date?
    }

    let root: URL
    /// What the models handed out are checked against again when their bytes are loaded.
    let verificationPolicy: TFLiteVerificationPolicy

    func modelDirectory(_ name: ModelName) -> URL { root.appendingPathComponent("models/\(name.rawValue)") }
    func partialFile(_ sha256: String) -> URL { root.appendingPathComponent("partial/\(sha256).part") }

    /// The version in use and what is known of its manifest, or `nil`.
    /// - Throws: `DepotError` (`storage_unreadable`) when its record exists but cannot be read.
    func current(_ name: ModelName) throws(DepotError) -> (model: VerifiedModel, cached: Current)? {
        let folder = modelDirectory(name)
        guard let data = try StoredFile.contents(of: folder.appendingPathComponent("current.json")),
            let current = try? JSONDecoder().decode(Current.self, from: data),
            let manifestData = try StoredFile.contents(of: folder.appendingPathComponent("\(current.directory)/manifest.json")),
            let stored = try? JSONDecoder().decode(StoredModel.self, from: manifestData)
        else { return nil }
        let file = folder.appendingPathComponent("\(current.directory)/model.tflite")
        guard Self.size(of: file) == stored.manifest.size else { return nil }
        var companions: [String: URL] = [:]
        for companion in stored.manifest.files {
            let url = folder.appendingPathComponent("\(current.directory)/files/\(companion.name)")
            guard Self.size(of: url) == companion.size else { return nil }
            companions[companion.name] = url
        }
        var model = VerifiedModel(
            manifest: stored.manifest, fileURL: file, description: stored.description, companionFiles: companions,
            verificationPolicy: verificationPolicy)
        model.confirmedAt = current.confirmedAt
        model.expires = current.expires ?? stored.manifest.expires
        return (model, current)
    }

    /// Moves a verified file into its version folder, makes it current, and keeps `kept` versions.
    /// Moves a verified model and its verified companion files into the version's folder, then
    /// makes it current in one atomic write: until then the previous version stays in use, whole.
    func install(
        _ file: URL, companions: [String: URL], manifest: ModelManifest, description: TFLiteModelDescription, etag: String?,
        confirmedAt: Date, kept: Int
    ) throws -> VerifiedModel {
        let folder = modelDirectory(manifest.model)
        let name = "v\(manifest.version)-\(manifest.sha256)"
        let destination = folder.appendingPathComponent(name)
        let manager = FileManager.default
        try manager.createDirectory(at: destination, withIntermediateDirectories: true)
        let modelFile = destination.appendingPathComponent("model.tflite")
        if manager.fileExists(atPath: modelFile.path) { try manager.removeItem(at: modelFile) }
        try manager.moveItem(at: file, to: modelFile)
        var installed: [String: URL] = [:]
        if !companions.isEmpty {
            let files = destination.appendingPathComponent("files")
            try manager.createDirectory(at: files, withIntermediateDirectories: true)
            for (name, source) in companions {
                let target = files.appendingPathComponent(name)
                if manager.fileExists(atPath: target.path) { try manager.removeItem(at: target) }
                try manager.moveItem(at: source, to: target)
                installed[name] = target
            }
        }
        try StoredFile.write(
            JSONEncoder().encode(StoredModel(manifest: manifest, description: description)),
            to: destination.appendingPathComponent("manifest.json"))
        try setCurrent(manifest.model, Current(directory: name, etag: etag, expires: manifest.expires, confirmedAt: confirmedAt))
        try prune(folder, keeping: kept, current: name)
        var model = VerifiedModel(
            manifest: manifest, fileURL: modelFile, description: description, companionFiles: installed,
            verificationPolicy: verificationPolicy)
        model.confirmedAt = confirmedAt
        return model
    }

    /// Records that the server confirmed the version in use at `date` (with the manifest ETag and
    /// expiry in `current`); returns the model as it is now.
    func confirm(_ name: ModelName, _ current: Current, at date: Date) throws -> VerifiedModel? {
        var confirmed = current
        confirmed.confirmedAt = date
        try setCurrent(name, confirmed)
        return try self.current(name)?.model
    }

    private func setCurrent(_ name: ModelName, _ current: Current) throws {
        try StoredFile.write(JSONEncoder().encode(current), to: modelDirectory(name).appendingPathComponent("current.json"))
    }

    /// Every model with a version in use (one whose record cannot be read now is left out).
    func models() -> [VerifiedModel] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("models").path)) ?? []
        return names.sorted().compactMap { try? ModelName($0) }.compactMap { try? current($0)?.model }
    }

    /// The files of every kept version of a model (its model file and companion files) by
    /// SHA-256: what a patch may apply to. Each was verified when its version was installed.
    func heldFiles(_ name: ModelName) -> [String: URL] {
        let folder = modelDirectory(name)
        var held: [String: URL] = [:]
        for directory in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] where directory.hasPrefix("v") {
            guard let data = try? StoredFile.contents(of: folder.appendingPathComponent("\(directory)/manifest.json")),
                let stored = try? JSONDecoder().decode(StoredModel.self, from: data)
            else { continue }
            let model = folder.appendingPathComponent("\(directory)/model.tflite")
            if Self.size(of: model) == stored.manifest.size { held[stored.manifest.sha256] = model }
            for companion in stored.manifest.files {
                let file = folder.appendingPathComponent("\(directory)/files/\(companion.name)")
                if Self.size(of: file) == companion.size { held[companion.sha256] = file }
            }
        }
        return held
    }

    func delete(_ name: ModelName) throws {
        let folder = modelDirectory(name)
        if FileManager.default.fileExists(atPath: folder.path) { try FileManager.default.removeItem(at: folder) }
    }

    private static func size(of file: URL) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue
    }

    private func prune(_ folder: URL, keeping kept: Int, current: String) throws {
        let versions = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasPrefix("v") && $0 != current }
            .sorted { (Int($0.dropFirst().prefix { $0 != "-" }) ?? 0) > (Int($1.dropFirst().prefix { $0 != "-" }) ?? 0) }
        for old in versions.dropFirst(max(kept, 1) - 1) {
            try FileManager.default.removeItem(at: folder.appendingPathComponent(old))
        }
    }
}

/// `manifest.json` of a version folder.
struct StoredModel: Codable {
    var manifest: ModelManifest
    var description: TFLiteModelDescription
}
