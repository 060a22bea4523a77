import Foundation
import ModelDepot
import ModelDepotLiteRT
import ModelDepotShared
import TestSupport
import Testing

/// Classification and detection in pure Swift (image decoding, libyuv's bilinear resize, the
/// metadata's normalization, LiteRT, labels) against the TFLite Task Library (tflite-support
/// 0.4.4) on the same models and images: labels and order exactly, scores within 1e-5, boxes
/// within one pixel.
@Suite
struct VisionTasksEndToEndTests {
    static let images = Binaries.repository.appendingPathComponent("Tests/Fixtures/images")
    static let metadataFixtures = Binaries.fixtures.appendingPathComponent("metadata")

    /// The Task Library's answer, from scripts/tflite/task_library_reference.py.
    static func reference<T: Decodable>(_ type: T.Type, _ arguments: [String]) async throws -> T {
        let script = Binaries.repository.appendingPathComponent("scripts/tflite/task_library_reference.py").path
        let python = Binaries.repository.appendingPathComponent(".build/tflite-support/bin/python")
        let output = try await Program.run(python, [script] + arguments)
        guard output.status == 0 else { throw E2EFailure("the Task Library reference failed: \(output.error)") }
        let line = output.text.split(separator: "\n").last.map(String.init) ?? ""
        return try JSONDecoder().decode(T.self, from: Data(line.utf8))
    }

    struct ReferenceCategory: Decodable { let index: Int, label: String, score: Float }
    struct ReferenceDetection: Decodable { let x: Int, y: Int, width: Int, height: Int, classIndex: Int, label: String, score: Float }

    func verified(_ fixture: String) async throws -> (PublishedModel, VerifiedModel) {
        let published = try await PublishedModel(["metadata/\(fixture)"])
        return (published, try await published.downloader().model(named: "flowers"))
    }

    @Test(arguments: ["image_classifier", "image_classifier_uint8"], ["scene_50x37", "scene_16x16", "scene_300x200"])
    func classificationsEqualTheTaskLibrarys(fixture: String, image: String) async throws {
        let (published, model) = try await verified(fixture)
        defer { withExtendedLifetime(published) {} }
        let library = try LiteRTLibrary(path: await LiteRTRuntime.libraryPath())
        let classifier = try ImageClassifier(model: model, library: library, options: .init(maximumResults: 5))
        let picture = Self.images.appendingPathComponent("\(image).png")
        let ours = try classifier.classify(try PixelBuffer(contentsOfFile: picture.path))
        let theirs = try await Self.reference([ReferenceCategory].self, ["classify", model.fileURL.path, picture.path, "5"])
        #expect(ours.count == 5 && theirs.count == 5)
        // Equal scores (common in a quantized output) may come in either order in the Task
        // Library, whose sort is not stable; they are compared as groups.
        #expect(Self.groups(ours.map { ($0.score, $0.label) }) == Self.groups(theirs.map { ($0.score, $0.label) }), "\(ours) vs \(theirs)")
        for (mine, reference) in zip(ours, theirs) {
            #expect(abs(mine.score - reference.score) <= 1e-5, "\(mine) vs \(reference)")
        }
    }

    @Test(arguments: ["image_classifier", "image_classifier_uint8"])
    func regionClassificationsEqualTheTaskLibrarys(fixture: String) async throws {
        let (published, model) = try await verified(fixture)
        defer { withExtendedLifetime(published) {} }
        let classifier = try ImageClassifier(
            model: model, library: try LiteRTLibrary(path: await LiteRTRuntime.libraryPath()),
            options: .init(maximumResults: 5))
        // Boxes inside, at each edge, of one pixel's width, and the whole image.
        let boxes: [(String, PixelRegion)] = [
            ("scene_300x200", PixelRegion(x: 30, y: 20, width: 120, height: 90)),
            ("scene_300x200", PixelRegion(x: 0, y: 0, width: 64, height: 200)),
            ("scene_300x200", PixelRegion(x: 250, y: 150, width: 50, height: 50)),
            ("scene_300x200", PixelRegion(x: 100, y: 60, width: 1, height: 37)),
            ("scene_50x37", PixelRegion(x: 0, y: 0, width: 50, height: 37)),
            ("scene_50x37", PixelRegion(x: 13, y: 7, width: 21, height: 9)),
        ]
        for (image, box) in boxes {
            let picture = Self.images.appendingPathComponent("\(image).png")
            let ours = try classifier.classify(try PixelBuffer(contentsOfFile: picture.path), region: box)
            let theirs = try await Self.reference(
                [ReferenceCategory].self,
                [
                    "classify-region", model.fileURL.path, picture.path, "5",
                    "\(box.x)", "\(box.y)", "\(box.width)", "\(box.height)",
                ])
            #expect(ours.count == 5 && theirs.count == 5, "\(image) \(box)")
            #expect(
                Self.groups(ours.map { ($0.score, $0.label) }) == Self.groups(theirs.map { ($0.score, $0.label) }),
                "\(image) \(box): \(ours) vs \(theirs)")
            for (mine, reference) in zip(ours, theirs) {
                #expect(abs(mine.score - reference.score) <= 1e-5, "\(image) \(box): \(mine) vs \(reference)")
            }
        }
    }

    static func groups(_ ranked: [(Float, String)]) -> [Set<String>] {
        var groups: [(Float, Set<String>)] = []
        for (score, label) in ranked {
            if let last = groups.last, abs(last.0 - score) <= 1e-5 {
                groups[groups.count - 1].1.insert(label)
            } else {
                groups.append((score, [label]))
            }
        }
        return groups.map(\.1)
    }

    @Test(arguments: ["scene_300x200", "scene_50x37", "scene_16x16"])
    func detectionsEqualTheTaskLibrarys(image: String) async throws {
        let (published, model) = try await verified("object_detector")
        defer { withExtendedLifetime(published) {} }
        let detector = try ObjectDetector(model: model, library: try LiteRTLibrary(path: await LiteRTRuntime.libraryPath()))
        let picture = Self.images.appendingPathComponent("\(image).png")
        let ours = try detector.detect(try PixelBuffer(contentsOfFile: picture.path))
        let theirs = try await Self.reference([ReferenceDetection].self, ["detect", model.fileURL.path, picture.path])
        #expect(!ours.isEmpty)
        #expect(ours.map(\.label) == theirs.map(\.label))
        #expect(ours.map(\.classIndex) == theirs.map(\.classIndex))
        for (mine, reference) in zip(ours, theirs) {
            #expect(abs(mine.score - reference.score) <= 1e-5, "\(mine) vs \(reference)")
            let box = mine.box
            #expect(
                abs(box.x - reference.x) <= 1 && abs(box.y - reference.y) <= 1 && abs(box.width - reference.width) <= 1
                    && abs(box.height - reference.height) <= 1, "\(box) vs \(reference)")
        }
    }

    @Test(arguments: ["scene_50x37", "scene_300x200", "scene_16x16"])
    func theResizedImageIsTheTaskLibrarysPixelForPixel(image: String) async throws {
        let picture = Self.images.appendingPathComponent("\(image).png")
        let echo = Self.metadataFixtures.appendingPathComponent("pixel_echo.tflite")
        let theirs = try await Self.reference([Int].self, ["pixels", echo.path, picture.path])
        let ours = try PixelBuffer(contentsOfFile: picture.path).rgb().resized(width: 16, height: 16, region: nil)
        #expect(ours.bytes.map(Int.init) == theirs)
    }

    @Test func automlExportDetectsWithItsSettingsAndLabels() async throws {
        let published = try await PublishedModel([])
        defer { withExtendedLifetime(published) {} }
        let automl = Binaries.repository.appendingPathComponent("Tests/Fixtures/automl/object_detection")
        try await Command.depot(["upload", "flowers", automl.path, "--publish"], environment: published.server.environment).succeeded()
        let model = try await published.downloader().model(named: "flowers")
        #expect(model.metadata == nil, "AutoML's export carries its settings in tflite_metadata.json instead")
        let library = try LiteRTLibrary(path: await LiteRTRuntime.libraryPath())
        let picture = try PixelBuffer(contentsOfFile: Self.images.appendingPathComponent("scene_300x200.png").path)
        let all = try ObjectDetector(model: model, library: library).detect(picture)
        #expect(all.count == 6, "maxDetections from tflite_metadata.json")
        let confident = try ObjectDetector(model: model, library: library, options: .init(maximumResults: 2, scoreThreshold: 0.99)).detect(
            picture)
        #expect(confident.count == 2 && confident.allSatisfy { $0.score >= 0.99 })
        #expect(Set(all.map(\.label)).isSubset(of: ["red", "green", "blue"]) && Set(all.map(\.label)).count == 3)

        // The same model with its metadata answers the same.
        let reference = try await Self.reference(
            [ReferenceDetection].self,
            [
                "detect", Self.metadataFixtures.appendingPathComponent("object_detector.tflite").path,
                Self.images.appendingPathComponent("scene_300x200.png").path,
            ])
        #expect(all.map(\.label) == reference.map(\.label))
    }

    @Test func aRegionIsClassifiedAndBoxesStayInTheImagesPixels() async throws {
        let (published, model) = try await verified("object_detector")
        defer { withExtendedLifetime(published) {} }
        let detector = try ObjectDetector(model: model, library: try LiteRTLibrary(path: await LiteRTRuntime.libraryPath()))
        let picture = try PixelBuffer(contentsOfFile: Self.images.appendingPathComponent("scene_300x200.png").path)
        let right = try detector.detect(picture, region: PixelRegion(x: 150, y: 0, width: 150, height: 200))
        #expect(!right.isEmpty)
        #expect(right.allSatisfy { $0.box.x >= 150 - $0.box.width })
        let outside = #expect(throws: DepotError.self) {
            try detector.detect(picture, region: PixelRegion(x: 250, y: 0, width: 100, height: 10))
        }
        #expect(outside?.code == .invalidImage)
        let notAClassifier = await #expect(throws: DepotError.self) {
            try ImageClassifier(model: model, library: try LiteRTLibrary(path: await LiteRTRuntime.libraryPath()))
        }
        #expect(notAClassifier?.code == .unsupportedModel)
    }
}
