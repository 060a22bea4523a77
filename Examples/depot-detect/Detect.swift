import ArgumentParser
import Foundation
import ModelDepot
import ModelDepotLiteRT
import ModelDepotShared

/// The object detection walk-through (AutoML Vision Edge, SSD): download a detector and its
/// labels from a ModelDepot server, verify them on the device, run the model in LiteRT on an
/// image, and print each detection with its label, score and box in the image's pixels.
@main
struct Detect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "depot-detect",
        abstract: "Download, verify and run an object detection model on an image; print the detections."
    )

    @Option(help: "The ModelDepot server's URL.") var server: String
    @Option(help: "A read-only app key.") var key: String
    @Option(help: "The root public key to trust (base64, from 'depot keys root generate').") var rootKey: String
    @Option(help: "The model's name.") var model: String
    @Option(help: "The image: PNG or binary PPM.") var image: String
    @Option(help: "libLiteRt.so (from the ai-edge-litert wheel).") var litert: String
    @Option(help: "Where downloaded models are kept.") var cache = FileManager.default.temporaryDirectory.appendingPathComponent(
        "depot-detect"
    ).path
    @Option(help: "Leave out detections scoring below this (default: the model's metadata, else 0).") var threshold: Float?
    @Option(help: "At most this many detections (default: the model's, or tflite_metadata.json's maxDetections).") var max: Int?

    func run() async throws {
        guard let serverURL = URL(string: server) else { throw ValidationError("'\(server)' is not a URL.") }
        let downloader = try ModelDownloader(
            configuration: .init(
                serverURL: serverURL, appKey: key, trustedRoot: .publicKey(rootKey),
                cacheDirectory: URL(fileURLWithPath: cache)))
        let verified = try await downloader.model(named: model)
        let detector = try ObjectDetector(
            model: verified, library: try LiteRTLibrary(path: litert),
            options: .init(maximumResults: max, scoreThreshold: threshold))
        let picture = try PixelBuffer(contentsOfFile: image)
        print("\(verified.name) v\(verified.version) (sha256 \(verified.sha256.prefix(12))…), \(picture.width)x\(picture.height) image")
        for detection in try detector.detect(picture) {
            let label = detection.label.isEmpty ? "class \(detection.classIndex)" : detection.label
            print(String(format: "%@: %.4f at %@", label, detection.score, detection.box.description))
        }
    }
}
