import Foundation
import ModelDepot
import ModelDepotLiteRT
import ModelDepotShared

/// Our side of scripts/bench/camera: `CustomObjectDetector` in stream mode, five objects with
/// classification, on 640x480 NV12 frames, with both models downloaded and verified from a
/// running server as an app gets them. Prints one JSON line with milliseconds per frame (median,
/// p99) for each classification interval asked for, and the parts measured on their own: the
/// frame's conversion, the tracker, and LiteRT's inference (the detector, and the classifier).
enum CameraBenchmark {
    static let width = 640, height = 480

    static func run(_ values: [String]) async throws {
        guard values.count == 6 else {
            print("usage: depot-benchmark camera SERVER KEY ROOT_KEY CACHE LIBLITERT FRAMES.nv12")
            exit(2)
        }
        guard let server = URL(string: values[0]) else { throw DepotError(.badRequest, "'\(values[0])' is not a URL.") }
        let downloader = try ModelDownloader(
            configuration: .init(
                serverURL: server, appKey: values[1],
                trustedRoot: .publicKey(values[2]), cacheDirectory: URL(fileURLWithPath: values[3])))
        let detector = try await downloader.model(named: "detector")
        let classifier = try await downloader.model(named: "classifier")
        let library = try LiteRTLibrary(path: values[4])
        let frames = try readFrames(values[5])

        var result: [String: Any] = ["frames": frames.count]
        for interval in [5, 1] {
            var options = CustomObjectDetector.Options(shouldEnableMultipleObjects: true, shouldEnableClassification: true)
            options.classificationInterval = interval
            let pipeline = try CustomObjectDetector(detector: detector, classifier: classifier, library: library, options: options)
            var objects: [Int] = []
            let times = try frames.map { frame in
                try measure { objects.append(try pipeline.results(in: frame).count) }
            }
            result["interval\(interval)"] = summary(times)
            result["objects"] = objects.sorted()[objects.count / 2]
        }

        // The parts on their own.
        result["conversion"] = summary(try frames.map { frame in try measure { _ = try frame.upright() } })
        let proposer = try ObjectDetector(model: detector, library: library, options: .init(scoreThreshold: 0.1))
        let detections = try frames.map { try proposer.detect(try $0.upright()) }
        let tracker = ObjectTracker()
        result["tracking"] = summary(
            detections.map { found in
                measure {
                    _ = tracker.update(
                        found.map {
                            ObjectTracker.Observation(
                                box: TrackerBox(
                                    x: Double($0.box.x), y: Double($0.box.y), width: Double($0.box.width),
                                    height: Double($0.box.height)), score: $0.score)
                        })
                }
            })
        for (name, model) in [("detectorInference", detector), ("classifierInference", classifier)] {
            let interpreter = try LiteRTInterpreter(model: model, library: library)
            guard let input = model.description.inputs.first else {
                throw DepotError(.unsupportedModel, "\(name): the model has no input.")
            }
            let value = TensorValue(float32: [Float](repeating: 0.5, count: input.shape.reduce(1, *)), shape: input.shape)
            result[name] = summary(try (0..<frames.count).map { _ in try measure { _ = try interpreter.run([value]) } })
        }
        print(String(decoding: try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys]), as: UTF8.self))
    }

    /// The file's NV12 frames (BT.601, video range), each its own planes.
    static func readFrames(_ path: String) throws -> [CameraFrame] {
        let frameSize = width * height * 3 / 2
        guard let file = FileHandle(forReadingAtPath: path) else { throw DepotError(.fileUnreadable, "Could not read '\(path)'.") }
        defer { try? file.close() }
        var frames: [CameraFrame] = []
        while let data = try file.read(upToCount: frameSize), !data.isEmpty {
            guard data.count == frameSize else {
                throw DepotError(.invalidImage, "'\(path)' ends within a frame: \(data.count) bytes of \(frameSize).")
            }
            let bytes = Array(data)
            frames.append(
                try CameraFrame(
                    width: width, height: height, format: .nv12,
                    planes: [
                        .init(bytes: Array(bytes[..<(width * height)]), rowStride: width),
                        .init(bytes: Array(bytes[(width * height)...]), rowStride: width),
                    ]))
        }
        guard !frames.isEmpty else { throw DepotError(.invalidImage, "'\(path)' holds no frame.") }
        return frames
    }

    static func measure(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        return (ContinuousClock.now - start).seconds * 1e3
    }

    /// Median and 99th percentile, in milliseconds.
    static func summary(_ times: [Double]) -> [String: Double] {
        let sorted = times.sorted()
        return ["median": sorted[sorted.count / 2], "p99": sorted[min(sorted.count - 1, sorted.count * 99 / 100)]]
    }
}
