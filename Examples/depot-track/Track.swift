import ArgumentParser
import Foundation
import ModelDepot
import ModelDepotLiteRT
import ModelDepotShared

/// ML Kit's "detect, track and classify objects with a custom classification model" as a
/// command: download and verify a detection model and (optionally) a classifier from a ModelDepot
/// server, run them on frames (a folder of PNGs, or a raw NV12 file as a camera writes it) and
/// print one JSON line per frame with each object's tracking id, box and labels.
@main
struct Track: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "depot-track",
        abstract: "Detect, track and classify objects in frames; print one JSON line per frame.",
        discussion: """
            Frames: --frames DIR (its .png files, by name), or --nv12 FILE with --width and --height \
            (frames one after another: the Y plane, then the interleaved U and V at half size).
            Each line: {"frame": n, "objects": [{"id": 1, "x": …, "y": …, "width": …, "height": …, \
            "labels": [{"index": …, "text": "…", "confidence": …}]}]} (no "id" with --single-image).
            """
    )

    @Option(help: "The ModelDepot server's URL.") var server: String
    @Option(help: "A read-only app key.") var key: String
    @Option(help: "The root public key to trust (base64, from 'depot keys root generate').") var rootKey: String
    @Option(help: "The detection model's name (TFLite_Detection_PostProcess outputs; its classes are ignored).") var detector: String
    @Option(help: "The classifier model's name; objects are labelled with it.") var classifier: String?
    @Option(help: "A bundled classifier .tflite, used when the server cannot be reached and none is downloaded.") var bundledClassifier:
        String?
    @Option(help: "libLiteRt.so (from the ai-edge-litert wheel).") var litert: String
    @Option(help: "A folder of PNG frames, taken in name order.") var frames: String?
    @Option(help: "A raw NV12 file of frames.") var nv12: String?
    @Option(help: "The NV12 frames' width.") var width: Int?
    @Option(help: "The NV12 frames' height.") var height: Int?
    @Option(help: "Degrees clockwise that stand a frame upright: 0, 90, 180 or 270.") var rotation = 0
    @Flag(help: "Mirror each frame left to right before turning it (a front camera).") var mirrored = false
    @Flag(help: "Full-range YUV (iOS's 420f) instead of video range.") var fullRange = false
    @Flag(help: "BT.709 instead of BT.601.") var bt709 = false
    @Flag(help: "Up to five objects per frame instead of the most prominent one.") var multiple = false
    @Flag(help: "Treat frames as unrelated images: no tracking ids.") var singleImage = false
    @Option(help: "Labels below this confidence are left out (default: the classifier's metadata, else 0).") var threshold: Float?
    @Option(help: "At most this many labels per object.") var maxLabels = 10
    @Option(help: "Where downloaded models are kept.") var cache = FileManager.default.temporaryDirectory.appendingPathComponent(
        "depot-track"
    ).path

    func validate() throws {
        guard (frames == nil) != (nv12 == nil) else { throw ValidationError("Give either --frames DIR or --nv12 FILE.") }
        if nv12 != nil {
            guard let width, let height, width > 0, height > 0 else {
                throw ValidationError("--nv12 needs --width and --height, both positive.")
            }
            guard width <= PixelBuffer.maximumPixels / height else {
                throw ValidationError(
                    "A frame of \(width)x\(height) pixels is more than the \(PixelBuffer.maximumPixels) a frame may have.")
            }
        }
        guard [0, 90, 180, 270].contains(rotation) else { throw ValidationError("--rotation is \(rotation); give 0, 90, 180 or 270.") }
        guard maxLabels >= 1 else { throw ValidationError("--max-labels is \(maxLabels); give 1 or more.") }
        if bundledClassifier != nil, classifier == nil { throw ValidationError("--bundled-classifier needs --classifier NAME.") }
    }

    func run() async throws {
        guard let serverURL = URL(string: server) else { throw ValidationError("'\(server)' is not a URL.") }
        let downloader = try ModelDownloader(
            configuration: .init(
                serverURL: serverURL, appKey: key, trustedRoot: .publicKey(rootKey),
                cacheDirectory: URL(fileURLWithPath: cache)))
        let proposer = try await downloader.model(named: detector)
        let labeller: VerifiedModel? =
            switch (classifier, bundledClassifier) {
            case (let name?, let bundled?):
                try await downloader.model(named: name, fallback: LocalModel(fileURL: URL(fileURLWithPath: bundled)))
            case (let name?, nil): try await downloader.model(named: name)
            default: nil
            }
        let options = CustomObjectDetector.Options(
            detectorMode: singleImage ? .singleImage : .stream, shouldEnableMultipleObjects: multiple,
            shouldEnableClassification: labeller != nil, classificationConfidenceThreshold: threshold,
            maxPerObjectLabelCount: maxLabels)
        let pipeline = try CustomObjectDetector(
            detector: proposer, classifier: labeller, library: try LiteRTLibrary(path: litert), options: options)
        let orientation = try FrameOrientation(rotation: rotation, mirrored: mirrored)
        let encoder = JSONEncoder()
        var index = 0
        try forEachFrame(orientation) { frame in
            let objects = try pipeline.results(in: frame)
            let line = FrameLine(frame: index, objects: objects.map(ObjectLine.init))
            print(String(decoding: try encoder.encode(line), as: UTF8.self))
            index += 1
        }
    }

    /// Each frame in turn, read one at a time (an NV12 file is never held whole).
    private func forEachFrame(_ orientation: FrameOrientation, _ body: (CameraFrame) throws -> Void) throws {
        if let frames {
            let names = try FileManager.default.contentsOfDirectory(atPath: frames).filter { $0.lowercased().hasSuffix(".png") }.sorted()
            guard !names.isEmpty else { throw ValidationError("'\(frames)' holds no .png files.") }
            for name in names {
                let image = try PixelBuffer(contentsOfFile: URL(fileURLWithPath: frames).appendingPathComponent(name).path).rgb()
                var rgba = [UInt8](repeating: 255, count: image.width * image.height * 4)
                for pixel in 0..<(image.width * image.height) {
                    rgba[pixel * 4..<pixel * 4 + 3] = image.bytes[pixel * 3..<pixel * 3 + 3]
                }
                try body(
                    try CameraFrame(
                        width: image.width, height: image.height, format: .rgba,
                        planes: [.init(bytes: rgba, rowStride: image.width * 4)], orientation: orientation))
            }
        } else if let nv12, let width, let height {
            guard let file = FileHandle(forReadingAtPath: nv12) else { throw ValidationError("Could not read '\(nv12)'.") }
            defer { try? file.close() }
            let lumaSize = width * height, chromaSize = ((width + 1) / 2) * 2 * ((height + 1) / 2)
            while let bytes = try file.read(upToCount: lumaSize + chromaSize), !bytes.isEmpty {
                guard bytes.count == lumaSize + chromaSize else {
                    throw ValidationError(
                        "'\(nv12)' ends within a frame: \(bytes.count) bytes of \(lumaSize + chromaSize); check --width and --height.")
                }
                let all = Array(bytes)
                try body(
                    try CameraFrame(
                        width: width, height: height, format: .nv12,
                        planes: [
                            .init(bytes: Array(all[..<lumaSize]), rowStride: width),
                            .init(bytes: Array(all[lumaSize...]), rowStride: ((width + 1) / 2) * 2),
                        ],
                        colorSpace: bt709 ? .bt709 : .bt601, colorRange: fullRange ? .full : .video, orientation: orientation))
            }
        }
    }
}

struct FrameLine: Encodable {
    let frame: Int
    let objects: [ObjectLine]
}

struct ObjectLine: Encodable {
    struct Label: Encodable {
        let index: Int
        let text: String
        let confidence: Float
    }

    let id: Int?
    let x, y, width, height: Int
    let labels: [Label]

    init(_ object: CustomObjectDetector.DetectedObject) {
        id = object.trackingID
        (x, y, width, height) = (object.frame.x, object.frame.y, object.frame.width, object.frame.height)
        labels = object.labels.map { Label(index: $0.index, text: $0.text, confidence: $0.confidence) }
    }
}
