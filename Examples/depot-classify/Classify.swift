import ArgumentParser
import Foundation
import ModelDepot
import ModelDepotLiteRT
import ModelDepotShared

/// The classic classification walk-through, end to end: download a model from a ModelDepot
/// server, verify it on the device, run it in LiteRT on an image (PNG or PPM, prepared as the
/// TFLite Task Library prepares it) or on a raw input tensor, and print the top classes with the
/// labels the model carries.
@main
struct Classify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "depot-classify",
        abstract: "Download, verify and run a classification model; print the top classes."
    )

    @Option(help: "The ModelDepot server's URL.") var server: String
    @Option(help: "A read-only app key.") var key: String
    @Option(help: "The root public key to trust (base64, from 'depot keys root generate').") var rootKey: String
    @Option(help: "The model's name.") var model: String
    @Option(help: "An image to classify: PNG or binary PPM.") var image: String?
    @Option(help: "Instead of an image, the input tensor: raw little-endian float32 values, as many as the model's input takes.")
    var input: String?
    @Option(help: "A labels file, one label per line, in output order (default: the model's own labels).") var labels: String?
    @Option(help: "libLiteRt.so (from the ai-edge-litert wheel).") var litert: String
    @Option(help: "Where downloaded models are kept.") var cache = FileManager.default.temporaryDirectory.appendingPathComponent(
        "depot-classify"
    ).path
    @Option(help: "How many classes to print.") var top = 3
    @Option(help: "Leave out classes scoring below this (default: the model's metadata, else 0).") var threshold: Float?

    func validate() throws {
        guard (image == nil) != (input == nil) else { throw ValidationError("Give either --image or --input.") }
    }

    func run() async throws {
        guard let serverURL = URL(string: server) else { throw ValidationError("'\(server)' is not a URL.") }
        let downloader = try ModelDownloader(
            configuration: .init(
                serverURL: serverURL, appKey: key, trustedRoot: .publicKey(rootKey),
                cacheDirectory: URL(fileURLWithPath: cache)))
        let verified = try await downloader.model(named: model)
        let library = try LiteRTLibrary(path: litert)
        print("\(verified.name) v\(verified.version) (sha256 \(verified.sha256.prefix(12))…)")
        let names = try labels.map { try String(contentsOfFile: $0, encoding: .utf8).split(separator: "\n").map(String.init) }
        if let image {
            let classifier = try ImageClassifier(
                model: verified, library: library,
                options: .init(maximumResults: top, scoreThreshold: threshold))
            for category in try classifier.classify(try PixelBuffer(contentsOfFile: image)) {
                let label = names.map { category.index < $0.count ? $0[category.index] : "" } ?? category.label
                print(String(format: "%@: %.4f", label.isEmpty ? "class \(category.index)" : label, category.score))
            }
            return
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: input!))
        let shape = verified.description.inputs.first?.shape ?? []
        let outputs = try library.makeInterpreter(for: verified).run([TensorValue(type: .float32, shape: shape, bytes: Array(data))])
        guard let scores = outputs.first?.float32Values else {
            throw ValidationError("The model's first output is not float32; this example prints float32 scores.")
        }
        let known = names ?? verified.labels
        for (index, score) in scores.enumerated().sorted(by: { $0.element > $1.element }).prefix(top) {
            let label = index < known.count ? known[index] : "class \(index)"
            print(String(format: "%@: %.4f", label, score))
        }
    }
}
