import Crypto
import Foundation
import ModelDepotShared

/// A companion file to send after the model: its name, digest and size, and where it is.
struct CompanionUpload: Sendable {
    let file: CompanionFile
    let path: String
}

/// What `depot upload` sends: a model file and its companion files, from `FILE --file NAME=PATH…`
/// or from an AutoML Vision Edge export folder (`model.tflite`, `dict.txt` as `labels`,
/// `tflite_metadata.json` as `automl`), each checked before the first byte goes out.
struct UploadSource {
    /// The companion names an AutoML Vision Edge export folder's files get.
    static let automlFiles = [("dict.txt", "labels"), ("tflite_metadata.json", "automl")]

    let model: String
    let companions: [CompanionUpload]

    /// - Parameters:
    ///   - path: A `.tflite` file, or an AutoML Vision Edge export folder.
    ///   - options: `NAME=PATH` pairs from `--file`.
    /// - Throws: ``DepotError`` naming the file or option that is wrong.
    init(path: String, options: [String]) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw DepotError(.fileUnreadable, "'\(path)' does not exist. Give a .tflite file or an AutoML Vision Edge export folder.")
        }
        var pairs: [(name: String, path: String)] = []
        if isDirectory.boolValue {
            model = (path as NSString).appendingPathComponent("model.tflite")
            guard FileManager.default.fileExists(atPath: model) else {
                throw DepotError(
                    .fileUnreadable,
                    "The folder '\(path)' holds no model.tflite: it is not an AutoML Vision Edge export. Give the .tflite file itself, with --file NAME=PATH for its companion files."
                )
            }
            for (file, name) in Self.automlFiles
            where FileManager.default.fileExists(atPath: (path as NSString).appendingPathComponent(file)) {
                pairs.append((name, (path as NSString).appendingPathComponent(file)))
            }
        } else {
            model = path
        }
        for option in options {
            let parts = option.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[1].isEmpty else {
                throw DepotError(.invalidCompanionFile, "--file '\(option)' is not NAME=PATH (for example --file labels=dict.txt).")
            }
            if let index = pairs.firstIndex(where: { $0.name == parts[0] }) { pairs.remove(at: index) }
            pairs.append((parts[0], parts[1]))
        }
        companions = try pairs.map { pair throws in try Self.companion(name: pair.name, path: pair.path) }
        try CompanionFile.check(companions.map(\.file))
        if let automl = companions.first(where: { $0.file.name == "automl" }) { try Self.checkAutoMLSettings(automl.path, model: model) }
    }

    private static func companion(name: String, path: String) throws -> CompanionUpload {
        try CompanionFile.check(name: name)
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
        guard let size else {
            throw DepotError(.fileUnreadable, "Companion file '\(name)' ('\(path)') cannot be read. Check the path.")
        }
        guard size <= CompanionFile.maximumSize else {
            throw DepotError(
                .payloadTooLarge,
                "Companion file '\(name)' ('\(path)') has \(size) bytes; companion files may have at most \(CompanionFile.maximumSize) (64 MiB)."
            )
        }
        return CompanionUpload(file: try CompanionFile(name: name, sha256: try SHA256.digest(ofFileAt: path).hex, size: size), path: path)
    }

    /// Checks that `tflite_metadata.json` is a JSON object and that its input shape, if it gives
    /// one, is the model's.
    private static func checkAutoMLSettings(_ path: String, model: String) throws {
        guard let data = FileManager.default.contents(atPath: path),
            let settings = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else {
            throw DepotError(
                .invalidCompanionFile,
                "'\(path)' (automl) is not a JSON object, as AutoML Vision Edge's tflite_metadata.json is. Give the file the export holds.")
        }
        guard let shape = settings["inputShape"] as? [Int] else { return }
        let described = try MappedFile(path: model).withBytes { bytes throws(DepotError) in try TFLiteVerifier().verify(bytes) }
        guard let input = described.inputs.first, input.shape == shape else {
            throw DepotError(
                .invalidCompanionFile,
                "'\(path)' gives input shape \(shape), but '\(model)' takes \(described.inputs.first?.shape ?? []): they come from different exports. Upload the model with the settings exported with it."
            )
        }
    }
}
