import ArgumentParser
import Foundation
import ModelDepot
import ModelDepotLiteRT
import ModelDepotShared

/// The classic classification walk-through, end to end: download a model from a ModelDepot
/// server, verify it on the device, run it in LiteRT on an input tensor file, and print the top
/// classes with their labels.
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
    @Option(help: "The input tensor: raw little-endian float32 values, as many as the model's input takes.") var input: String
    @Option(help: "A labels file, one label per line, in output order.") var labels: String
    @Option(help: "libLiteRt.so (from the ai-edge-litert wheel).") var litert: String
    @Option(help: "Where downloaded models are kept.") var cache = FileManager.default.temporaryDirectory.appendingPathComponent("depot-classify").path
    @Option(help: "How many classes to print.") var top = 3

    func run() async throws {
        guard let serverURL = URL(string: server) else { throw ValidationError("'\(server)' is not a URL.") }
        let downloader = try ModelDownloader(configuration: .init(serverURL: serverURL, appKey: key, trustedRoot: .publicKey(rootKey),
                                                                  cacheDirectory: URL(fileURLWithPath: cache)))
        let verified = try await downloader.model(named: model)
        let names = try String(contentsOfFile: labels, encoding: .utf8).split(separator: "\n").map(String.init)
        let data = try Data(contentsOf: URL(fileURLWithPath: input))
        let shape = verified.description.inputs.first?.shape ?? []
        let interpreter = try LiteRTLibrary(path: litert).makeInterpreter(for: verified)
        let outputs = try interpreter.run([TensorValue(type: .float32, shape: shape, bytes: Array(data))])
        guard let scores = outputs.first?.float32Values else {
            throw ValidationError("The model's first output is not float32; this example prints float32 scores.")
        }
        print("\(verified.name) v\(verified.version) (sha256 \(verified.sha256.prefix(12))…)")
        for (index, score) in scores.enumerated().sorted(by: { $0.element > $1.element }).prefix(top) {
            let label = index < names.count ? names[index] : "class \(index)"
            print(String(format: "%@: %.4f", label, score))
        }
    }
}
