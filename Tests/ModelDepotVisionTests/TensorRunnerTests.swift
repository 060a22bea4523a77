import Foundation
import ModelDepotShared
import ModelDepotVision
import Synchronization
import Testing

@testable import ModelDepot

/// The vision tasks over any interpreter: a runner the test scripts (as an app's wrapper of
/// TensorFlowLiteSwift would be) goes through the code LiteRT's does (VisionTasksEndToEndTests
/// run it over LiteRT), its answers checked before use, its loads and runs recorded.
@Suite struct TensorRunnerTests {
    /// Answers every run with `answer(inputs)`; counts what it was asked.
    final class ScriptedRuntime: TensorRunnerFactory {
        final class Runner: TensorRunner {
            let answer: @Sendable ([TensorValue]) throws -> [TensorValue]
            init(_ answer: @escaping @Sendable ([TensorValue]) throws -> [TensorValue]) { self.answer = answer }
            func run(_ inputs: [TensorValue]) throws -> [TensorValue] { try answer(inputs) }
        }

        let loads = Mutex(0)
        let failsToLoad: Bool
        let answer: @Sendable ([TensorValue]) throws -> [TensorValue]

        init(failsToLoad: Bool = false, answer: @escaping @Sendable ([TensorValue]) throws -> [TensorValue]) {
            self.failsToLoad = failsToLoad
            self.answer = answer
        }

        func makeRunner(for model: VerifiedModel) throws -> any TensorRunner {
            loads.withLock { $0 += 1 }
            if failsToLoad { throw RuntimeFailure() }
            return Runner(answer)
        }
    }

    struct RuntimeFailure: Error {}

    static let classifierFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Fixtures/tflite/metadata/image_classifier.tflite").standardizedFileURL

    let folder: URL
    let recorder: OutcomeRecorder
    let model: VerifiedModel

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("runner-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        recorder = OutcomeRecorder(directory: folder, enabled: true, clock: { Date() })
        model = try VerifiedModel.verifyBundled(Self.classifierFile, name: ModelName("flowers"), expectation: nil, policy: .default)
    }

    var image: PixelBuffer { get throws { try PixelBuffer(width: 4, height: 4, format: .rgb8, bytes: [UInt8](repeating: 90, count: 48)) } }

    /// The classifier's scores, one per class, with `best` highest.
    func scores(best: Int) throws -> [TensorValue] {
        let output = try #require(model.description.outputs.first)
        let classes = output.shape[1]
        let values = (0..<classes).map { $0 == best ? Float(0.9) : Float(0.1) / Float(classes) }
        return [TensorValue(float32: values, shape: output.shape)]
    }

    /// Recorded model-health events by metric name, with their counts.
    func recorded() -> [String: Int] {
        recorder.takeBatches().flatMap(\.events).reduce(into: [:]) {
            $0[$1.metric + ($1.code.map { ":" + $0 } ?? ""), default: 0] += $1.count ?? 1
        }
    }

    @Test func aClassifierOverAnyRunnerRanksItsScoresAndRecordsLoadsAndRuns() throws {
        let scores = try scores(best: 2)
        let input = try #require(model.description.inputs.first)
        let runtime = ScriptedRuntime { inputs in
            guard inputs.count == 1, inputs[0].type == input.type, inputs[0].shape == input.shape else { throw RuntimeFailure() }
            return scores
        }
        let classifier = try ImageClassifier(model: model, runtime: runtime, outcomes: recorder)
        let categories = try classifier.classify(try image)
        #expect(categories.first?.index == 2 && categories.first?.score == 0.9)
        #expect(categories.first?.label == model.labels(locale: nil)[2])
        _ = try classifier.classify(try image)
        let events = recorded()
        #expect(events["load_succeeded"] == 1 && events["inferences"] == 2 && events["inference_latency_ms"] == 2)
    }

    @Test func aRunnerThatFailsIsRecordedWithItsCodeAndAWrongAnswerIsRefusedNotTrusted() throws {
        let failing = try ImageClassifier(model: model, runtime: ScriptedRuntime { _ in throw RuntimeFailure() }, outcomes: recorder)
        #expect(throws: RuntimeFailure.self) { try failing.classify(try image) }
        let empty = try ImageClassifier(model: model, runtime: ScriptedRuntime { _ in [] }, outcomes: recorder)
        let refused = #expect(throws: DepotError.self) { try empty.classify(try image) }
        #expect(refused?.code == .signatureMismatch)
        let short = try ImageClassifier(
            model: model, runtime: ScriptedRuntime { _ in [TensorValue(float32: [1], shape: [1, 1])] }, outcomes: recorder)
        #expect((#expect(throws: DepotError.self) { try short.classify(try image) })?.code == .signatureMismatch)
        let events = recorded()
        #expect(events["inference_failed:unavailable"] == 1 && events["inference_failed:signature_mismatch"] == 2)
    }

    @Test func aRuntimeThatCannotLoadAndAModelTheTaskCannotUseAreFailedLoads() throws {
        let broken = ScriptedRuntime(failsToLoad: true) { _ in [] }
        #expect(throws: RuntimeFailure.self) { try ImageClassifier(model: model, runtime: broken, outcomes: recorder) }
        let unused = ScriptedRuntime { _ in [] }
        let refused = #expect(throws: DepotError.self) { try ObjectDetector(model: model, runtime: unused, outcomes: recorder) }
        #expect(refused?.code == .unsupportedModel)
        #expect(unused.loads.withLock { $0 } == 0, "a model the task cannot use never reaches the runtime")
        #expect(recorded() == ["load_failed:unavailable": 1, "load_failed:unsupported_model": 1])
    }

    /// A boxes output whose metadata puts a coordinate at position 9 of a box's 4 values (the
    /// fixture's `[1, 0, 3, 2]`, its last made 9) is refused when the detector is made: read at
    /// the first detection, it trapped the app.
    @Test func aDetectorWhoseBoxMetadataPointsOutsideABoxIsRefused() throws {
        let file = Self.classifierFile.deletingLastPathComponent().appendingPathComponent("object_detector.tflite")
        var bytes = [UInt8](try Data(contentsOf: file))
        let order: [UInt8] = [4, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0]
        let at = try #require((0...(bytes.count - order.count)).first { bytes[$0..<($0 + order.count)].elementsEqual(order) })
        let unused = ScriptedRuntime { _ in [] }
        let fine = try VerifiedModel.verifyBundled(file, name: ModelName("detector"), expectation: nil, policy: .default)
        _ = try ObjectDetector(model: fine, runtime: unused, outcomes: recorder)
        bytes[at + 16] = 9
        let edited = folder.appendingPathComponent("object_detector.tflite")
        try Data(bytes).write(to: edited)
        let model = try VerifiedModel.verifyBundled(edited, name: ModelName("detector"), expectation: nil, policy: .default)
        let refused = #expect(throws: DepotError.self) { try ObjectDetector(model: model, runtime: unused, outcomes: recorder) }
        #expect(refused?.code == .invalidMetadata && refused?.message.contains("[1, 0, 3, 9]") == true, "\(refused?.message ?? "")")
    }
}
