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
    static let three = [BlockScene.Block(column: 0, row: 0, rgb: BlockScene.red), BlockScene.Block(column: 3, row: 1, rgb: BlockScene.green),
                        BlockScene.Block(column: 1, row: 3, rgb: BlockScene.blue)]

    /// A server with the detector as `flowers` and the classifier as `colours`; both verified.
    static func models() async throws -> (PublishedModel, detector: VerifiedModel, classifier: VerifiedModel) {
        let published = try PublishedModel(["metadata/object_detector"])
        try Command.depot(["models", "create", "colours"], environment: published.server.environment).succeeded()
        try Command.depot(["upload", "colours", Binaries.fixture("metadata/image_classifier"), "--publish"],
                          environment: published.server.environment).succeeded()
        let downloader = try published.downloader()
        return (published, try await downloader.model(named: "flowers"), try await downloader.model(named: "colours"))
    }

    static func library() throws -> LiteRTLibrary { try LiteRTLibrary(path: try LiteRTRuntime.libraryPath()) }

    static func options(_ change: (inout Options) -> Void) -> Options {
        var options = Options()
        change(&options)
        return options
    }

    @Test func streamModeTracksEachObjectAndLabelsItWithTheClassifier() async throws {
        let (published, detector, classifier) = try await Self.models()
        defer { withExtendedLifetime(published) {} }
        let pipeline = try CustomObjectDetector(detector: detector, classifier: classifier, library: try Self.library(),
                                                options: Options(shouldEnableMultipleObjects: true, shouldEnableClassification: true))
        let reference = try ImageClassifier(model: classifier, library: try Self.library())
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
                #expect(object.labels.map(\.text) == theirs.map(\.label) && object.labels.map(\.confidence) == theirs.map(\.score),
                        "frame \(index): the labels are the classifier's on the object's frame")
                #expect(object.labels.map(\.index) == theirs.map(\.index))
            }
            #expect(Set(objects.compactMap { $0.labels.first?.text }) == ["red", "green", "blue"], "frame \(index): \(objects)")
        }
        #expect(ids == [1, 2, 3], "the same three ids in every frame")
    }
}
