import Foundation
import ModelDepotShared

extension VerifiedModel {
    /// A companion file of this version (uploaded with `depot upload --file NAME=PATH`), verified
    /// against the signed manifest and installed with the model, or `nil` when it has none by
    /// that name.
    ///
    /// ```swift
    /// let settings = model.companionFile(named: "automl").map { try Data(contentsOf: $0) }
    /// ```
    /// - Parameter name: The file's name (`labels`, `automl`, …).
    public func companionFile(named name: String) -> URL? { companionFiles[name] }

    /// The names of this version's companion files, sorted.
    public var companionFileNames: [String] { companionFiles.keys.sorted() }

    /// The model's TFLite Model Metadata, read by the verifier; `nil` when the model has none.
    public var metadata: TFLiteModelMetadata? { description.modelMetadata }

    /// The class labels of the first output: the metadata's label file for `locale` (or its first
    /// one), else the companion file `labels` (an AutoML `dict.txt`), split as the TFLite Task
    /// Library splits label files; empty when there are neither.
    /// - Parameter locale: A locale the metadata's label files name (`en`, `fr`, …), or `nil`.
    public func labels(locale: String? = nil) -> [String] {
        let files = description.labelFiles.filter { $0.output == 0 }
        if let file = files.first(where: { $0.locale == locale && locale != nil }) ?? files.first { return file.labels }
        guard let url = companionFile(named: "labels"), let data = FileManager.default.contents(atPath: url.path) else { return [] }
        return TFLiteLabelFile.labels(in: Array(data))
    }

    /// The class labels of the first output, in the metadata's first locale (see ``labels(locale:)``).
    public var labels: [String] { labels() }
}
