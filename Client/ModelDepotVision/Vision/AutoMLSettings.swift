import Foundation
import ModelDepot
import ModelDepotShared

/// The `tflite_metadata.json` of an AutoML Vision Edge export (uploaded as the companion file
/// `automl`): the input shape, the most detections, and which output is which.
struct AutoMLSettings: Decodable {
    var inputShape: [Int]?
    var maxDetections: Int?
    /// Names per output: `bounding_boxes`, `class_labels`, `class_confidences`, `num_of_boxes`.
    var outputTensorRepresentation: [String]?

    /// Reads the settings of a model's `automl` companion file, if it has one.
    /// - Throws: `DepotError` (`invalid_companion_file`) when the file is not such settings.
    static func of(_ model: VerifiedModel) throws(DepotError) -> AutoMLSettings? {
        guard let url = model.companionFile(named: "automl") else { return nil }
        guard let data = FileManager.default.contents(atPath: url.path),
            let settings = try? JSONDecoder().decode(AutoMLSettings.self, from: data)
        else {
            throw DepotError(
                .invalidCompanionFile,
                "The companion file 'automl' of '\(model.name)' v\(model.version) is not AutoML Vision Edge's tflite_metadata.json.")
        }
        return settings
    }
}
