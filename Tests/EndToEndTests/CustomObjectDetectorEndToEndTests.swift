import Foundation
import ModelDepot
import ModelDepotLiteRT
import ModelDepotShared
import TestSupport
import Testing

/// `CustomObjectDetector` with ML Kit's options, on NV12 camera frames of coloured blocks: the
/// detector fixture (`metadata/object_detector`) proposes, the colour classifier
/// (`metadata/image_classifier`) labels, both downloaded and verified from a real server.
@Suite struct CustomObjectDetectorEndToEndTests {
    typealias Options = CustomObjectDetector.Options
    let scene = BlockScene()
    static let three = [
        BlockScene.Block(column: 0, row: 0, rgb: BlockScene.red), BlockScene.Block(column: 3, row: 1, rgb: BlockScene.green),
        BlockScene.Block(column: 1, row: 3, rgb: BlockScene.blue),
    ]

    /// A server with the detector as `flowers` and the classifier as `colours`; both verified.
    static func models() async throws -> (PublishedModel, detector: VerifiedModel, classifier: VerifiedModel) {
        let published = try await PublishedModel(["metadata/object_detector"])
        try await Command.depot(["models", "create", "colours"], environment: published.server.environment).succeeded()
        try await Command.depot(
            ["upload", "colours", Binaries.fixture("metadata/image_classifier"), "--publish"],
            environment: published.server.environment
        ).succeeded()
        let downloader = try published.downloader()
        return (published, try await downloader.model(named: "flowers"), try await downloader.model(named: "colours"))
    }

    static func library() async throws -> LiteRTLibrary { try LiteRTLibrary(path: await LiteRTRuntime.libraryPath()) }

    static func options(_ change: (inout Options) -> Void) -> Options {
        var options = Options()
        change(&options)
        return options
    }

    @Test func streamModeTracksEachObjectAndLabelsItWithTheClassifier() async throws {
        let (published, detector, classifier) = try await Self.models()
        defer { withExtendedLifetime(published) {} }
        let pipeline = try await CustomObjectDetector(
            detector: detector, classifier: classifier, library: try Self.library(),
            options: Options(shouldEnableMultipleObjects: true, shouldEnableClassification: true))
        let reference = try await ImageClassifier(model: classifier, library: try Self.library())
        var ids: Set<Int> = []
        for index in 0..<8 {
            let frame = try scene.frame(Self.three)
            let objects = try pipeline.results(in: frame)
            #expect(objects.count == 3, "frame \(index): \(objects)")
            #expect(objects.allSatisfy { $0.trackingID != nil })
            ids.formUnion(objects.compactMap(\.trackingID))
            let image = try frame.upright()
            for object in objects {
                let theirs = try reference.classify(image, region: object.frame)
                #expect(
                    object.labels.map(\.text) == theirs.map(\.label) && object.labels.map(\.confidence) == theirs.map(\.score),
                    "frame \(index): the labels are the classifier's on the object's frame")
                #expect(object.labels.map(\.index) == theirs.map(\.index))
            }
            #expect(Set(objects.compactMap { $0.labels.first?.text }) == ["red", "green", "blue"], "frame \(index): \(objects)")
        }
        #expect(ids == [1, 2, 3], "the same three ids in every frame")
    }

    @Test func singleImageModeGivesNoIdsAndOnlyTheMostProminentObjectUnlessAskedForAll() async throws {
        let (published, detector, classifier) = try await Self.models()
        defer { withExtendedLifetime(published) {} }
        let all = try await CustomObjectDetector(
            detector: detector, classifier: classifier, library: try Self.library(),
            options: Options(detectorMode: .singleImage, shouldEnableMultipleObjects: true, shouldEnableClassification: true))
        let one = try await CustomObjectDetector(
            detector: detector, library: try Self.library(), options: Options(detectorMode: .singleImage))
        let frame = try scene.frame(Self.three)
        for _ in 0..<2 {
            let objects = try all.results(in: frame)
            #expect(objects.count == 3 && objects.allSatisfy { $0.trackingID == nil && !$0.labels.isEmpty }, "\(objects)")
            let prominent = try one.results(in: frame)
            let largest = objects.max { $0.frame.width * $0.frame.height < $1.frame.width * $1.frame.height }
            #expect(prominent.count == 1 && prominent.first?.frame == largest?.frame, "\(prominent) vs \(objects)")
            #expect(prominent.first?.labels == [], "classification is off by default")
        }
        // The frames are the detector's boxes, cut to the image.
        let boxes = try await ObjectDetector(model: detector, library: try Self.library(), options: .init(scoreThreshold: 0.35)).detect(
            try frame.upright())
        #expect(
            Set(try all.results(in: frame).map(\.frame))
                == Set(
                    boxes.map { box in
                        let right = min(scene.width, box.box.x + box.box.width), bottom = min(scene.height, box.box.y + box.box.height)
                        return PixelRegion(
                            x: max(0, box.box.x), y: max(0, box.box.y), width: right - max(0, box.box.x), height: bottom - max(0, box.box.y)
                        )
                    }))
    }

    @Test func labelsAreCarriedOverUntilTheObjectsNextClassification() async throws {
        let (published, detector, classifier) = try await Self.models()
        defer { withExtendedLifetime(published) {} }
        let pipeline = try await CustomObjectDetector(
            detector: detector, classifier: classifier, library: try Self.library(),
            options: Self.options {
                $0.shouldEnableClassification = true
                $0.classificationInterval = 4
            })
        let red = [BlockScene.Block(column: 1, row: 1, rgb: BlockScene.red)]
        let first = try #require(try pipeline.results(in: try scene.frame(red)).first)
        let id = try #require(first.trackingID)
        #expect(first.labels.first?.text == "red")
        // The block turns blue from frame 2: the labels stay red until frame f with (f + id) % 4 == 0.
        let refresh = (2...5).first { ($0 + id) % 4 == 0 }!
        for frame in 2...6 {
            let object = try #require(
                try pipeline.results(in: try scene.frame([BlockScene.Block(column: 1, row: 1, rgb: BlockScene.blue)])).first)
            #expect(object.trackingID == id)
            #expect(object.labels.first?.text == (frame < refresh ? "red" : "blue"), "frame \(frame), refreshed in \(refresh)")
        }
    }

    @Test func aNewObjectIsReportedFromItsSecondFrameAndAReturningOneGetsANewID() async throws {
        let (published, detector, _) = try await Self.models()
        defer { withExtendedLifetime(published) {} }
        var options = Options(shouldEnableMultipleObjects: true)
        options.tracking.maximumMissedFrames = 3
        let pipeline = try await CustomObjectDetector(detector: detector, library: try Self.library(), options: options)
        let two = Array(Self.three.prefix(2))
        #expect(try pipeline.results(in: try scene.frame(two)).compactMap(\.trackingID) == [1, 2])
        #expect(
            try pipeline.results(in: try scene.frame(Self.three)).compactMap(\.trackingID) == [1, 2], "results may be incomplete at first")
        #expect(try pipeline.results(in: try scene.frame(Self.three)).compactMap(\.trackingID) == [1, 2, 3])
        for _ in 0..<4 { #expect(try pipeline.results(in: try scene.frame(two)).compactMap(\.trackingID) == [1, 2]) }
        _ = try pipeline.results(in: try scene.frame(Self.three))
        #expect(try pipeline.results(in: try scene.frame(Self.three)).compactMap(\.trackingID) == [1, 2, 4], "ids are never reused")
    }

    @Test func withoutMultipleObjectsAStreamKeepsItsProminentObjectWhileItIsInView() async throws {
        let (published, detector, _) = try await Self.models()
        defer { withExtendedLifetime(published) {} }
        // Which of two blocks is the more prominent (the larger box), in one image; each block's
        // box found on its own.
        let blocks = Array(Self.three.prefix(2))
        let single = try await CustomObjectDetector(
            detector: detector, library: try Self.library(), options: Options(detectorMode: .singleImage))
        let prominent = try #require(try single.results(in: try scene.frame(blocks)).first)
        let alone = try blocks.map { try #require(try single.results(in: try scene.frame([$0])).first).frame }
        let lesser = try #require(alone.firstIndex { $0 != prominent.frame })
        #expect(alone[1 - lesser] == prominent.frame)

        let stream = try await CustomObjectDetector(
            detector: detector, library: try Self.library(), options: Self.options { $0.tracking.maximumMissedFrames = 2 })
        let followed = try #require(try stream.results(in: try scene.frame([blocks[lesser]])).first)
        #expect(followed.frame == alone[lesser])
        for _ in 0..<3 {
            let objects = try stream.results(in: try scene.frame(blocks))
            #expect(objects.map(\.trackingID) == [followed.trackingID], "the followed object stays, though another is larger")
        }
        // Missed in one frame: nothing is reported (not the other object), and it is followed again.
        #expect(try stream.results(in: try scene.frame([blocks[1 - lesser]])).isEmpty)
        #expect(try stream.results(in: try scene.frame(blocks)).map(\.trackingID) == [followed.trackingID])
        // Gone for longer than its track lives: the other object is chosen.
        for _ in 0..<3 { _ = try stream.results(in: try scene.frame([blocks[1 - lesser]])) }
        let next = try stream.results(in: try scene.frame([blocks[1 - lesser]]))
        #expect(next.count == 1 && next.first?.frame == prominent.frame && next.first?.trackingID != followed.trackingID)
    }

    @Test func labelsKeepToTheThresholdAndCountAndTheClassifierMayBeBundled() async throws {
        let (published, detector, _) = try await Self.models()
        defer { withExtendedLifetime(published) {} }
        // ML Kit's remote-or-bundled choice: the server is out of reach, so the bundled
        // classifier is used (verified like a download).
        let offline = try published.downloader {
            $0.serverURL = URL(string: "http://127.0.0.1:9")!
            $0.cacheDirectory = published.scratch.url.appendingPathComponent("offline")
            $0.retries = 0
        }
        let bundled = try await offline.model(
            named: "colours", fallback: LocalModel(fileURL: URL(fileURLWithPath: Binaries.fixture("metadata/image_classifier"))))
        #expect(bundled.manifest.arm == "bundled")
        let pipeline = try await CustomObjectDetector(
            detector: detector, classifier: bundled, library: try Self.library(),
            options: Options(
                detectorMode: .singleImage, shouldEnableMultipleObjects: true, shouldEnableClassification: true,
                classificationConfidenceThreshold: 0.05, maxPerObjectLabelCount: 2))
        let reference = try await ImageClassifier(
            model: bundled, library: try Self.library(), options: .init(maximumResults: 2, scoreThreshold: 0.05))
        let frame = try scene.frame(Self.three)
        let objects = try pipeline.results(in: frame)
        #expect(objects.count == 3)
        for object in objects {
            #expect(!object.labels.isEmpty && object.labels.count <= 2 && object.labels.allSatisfy { $0.confidence >= 0.05 })
            #expect(object.labels.map(\.text) == (try reference.classify(try frame.upright(), region: object.frame)).map(\.label))
        }
        let strict = try await CustomObjectDetector(
            detector: detector, classifier: bundled, library: try Self.library(),
            options: Options(
                detectorMode: .singleImage, shouldEnableClassification: true, classificationConfidenceThreshold: 1))
        #expect(try strict.results(in: frame).first?.labels == [], "no label reaches a confidence of 1")
    }

    @Test func framesAreInTheUprightImagesPixels() async throws {
        let (published, detector, _) = try await Self.models()
        defer { withExtendedLifetime(published) {} }
        let pipeline = try await CustomObjectDetector(
            detector: detector, library: try Self.library(),
            options: Options(detectorMode: .singleImage, shouldEnableMultipleObjects: true))
        // A scene 240 wide and 320 high, delivered by a sensor on its side (320x240, `.right`),
        // gives the objects the same scene gives upright.
        let upright = BlockScene(width: 240, height: 320)
        let objects = try pipeline.results(in: try upright.turnedFrame(Self.three))
        #expect(objects.count == 3)
        #expect(objects == (try pipeline.results(in: try upright.frame(Self.three))), "\(objects)")
    }

    @Test func badOptionsAndUnusableModelsAreRefusedByName() async throws {
        let (published, detector, classifier) = try await Self.models()
        defer { withExtendedLifetime(published) {} }
        let library = try await Self.library()
        let cases: [(Options, String)] = [
            (Options(shouldEnableClassification: true), "no classifier model"),
            (Options(classificationConfidenceThreshold: 1.5), "classificationConfidenceThreshold is 1.5"),
            (Options(classificationConfidenceThreshold: .nan), "classificationConfidenceThreshold is nan"),
            (Options(maxPerObjectLabelCount: 0), "maxPerObjectLabelCount is 0"),
            (Self.options { $0.classificationInterval = 0 }, "classificationInterval is 0"),
            (Self.options { $0.detectionScoreThreshold = -0.1 }, "detectionScoreThreshold is -0.1"),
            (Self.options { $0.tracking.lowScore = .nan }, "tracking.lowScore is nan"),
            (Self.options { $0.tracking.firstMatchIoU = 2 }, "tracking.firstMatchIoU is 2.0"),
            (Self.options { $0.tracking.maximumMissedFrames = -1 }, "tracking.maximumMissedFrames is -1"),
        ]
        for (options, message) in cases {
            let refused = #expect(throws: DepotError.self) {
                try CustomObjectDetector(detector: detector, library: library, options: options)
            }
            #expect(refused?.code == .invalidOptions && refused?.message.contains(message) == true, "\(String(describing: refused))")
        }
        let swapped = #expect(throws: DepotError.self) {
            try CustomObjectDetector(
                detector: classifier, classifier: detector, library: library, options: Options(shouldEnableClassification: true))
        }
        #expect(swapped?.code == .unsupportedModel)
        let notAClassifier = #expect(throws: DepotError.self) {
            try CustomObjectDetector(
                detector: detector, classifier: detector, library: library, options: Options(shouldEnableClassification: true))
        }
        #expect(notAClassifier?.code == .unsupportedModel)
    }
}
