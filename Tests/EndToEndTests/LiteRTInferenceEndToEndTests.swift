import Foundation
import ModelDepot
import ModelDepotLiteRT
import ModelDepotShared
import TestSupport
import Testing

/// Real LiteRT inference on a model downloaded and verified by the SDK.
@Suite
struct LiteRTInferenceEndToEndTests {
    @Test func downloadedClassifierGivesLiteRTsOwnAnswer() async throws {
        let published = try await PublishedModel(["float_classifier_labels"])
        defer { withExtendedLifetime(published) {} }
        let model = try await published.downloader().model(named: "flowers")

        let interpreter = try LiteRTLibrary(path: await LiteRTRuntime.libraryPath()).makeInterpreter(for: model)
        let input: [Float] = [0.9, -0.3, 0.25, 0.5]
        let outputs = try interpreter.run([TensorValue(float32: input, shape: [1, 4])])
        let probabilities = try #require(outputs.first?.float32Values)
        #expect(outputs.first?.shape == [1, 3])

        let reference = try await LiteRTRuntime.pythonOutput(model: model.fileURL.path, input: input)
        #expect(probabilities.count == reference.count)
        for (mine, theirs) in zip(probabilities, reference) { #expect(abs(mine - theirs) < 1e-6) }
        #expect(abs(probabilities.reduce(0, +) - 1) < 1e-5)

        let wrongType = #expect(throws: DepotError.self) { try interpreter.run([TensorValue(uint8: [1, 2, 3, 4], shape: [1, 4])]) }
        #expect(wrongType?.code == .signatureMismatch)
    }

    @Test func aFileSwappedAfterVerificationNeverReachesLiteRT() async throws {
        let published = try await PublishedModel(["float_classifier_labels"])
        defer { withExtendedLifetime(published) {} }
        let model = try await published.downloader().model(named: "flowers")
        let library = try LiteRTLibrary(path: await LiteRTRuntime.libraryPath())
        let input = [TensorValue(float32: [0.9, -0.3, 0.25, 0.5], shape: [1, 4])]
        let honest = try library.makeInterpreter(for: model).run(input)
        let bytes = try model.loadVerifiedBytes()

        // The swapped-in file is a valid model with another bias (0.1 -> 5.0), so it answers differently.
        var swapped = try Data(contentsOf: model.fileURL)
        let bias = try #require(swapped.firstRange(of: Data(Float(0.1).bitPattern.littleEndianBytes)))
        swapped.replaceSubrange(bias, with: Data(Float(5).bitPattern.littleEndianBytes))
        let swappedPath = published.scratch.path("swapped.tflite")
        try swapped.write(to: URL(fileURLWithPath: swappedPath))
        await #expect(try LiteRTRuntime.pythonOutput(model: swappedPath, input: [0.9, -0.3, 0.25, 0.5]) != honest.first?.float32Values)
        try FileManager.default.removeItem(at: model.fileURL)
        try FileManager.default.copyItem(atPath: swappedPath, toPath: model.fileURL.path)
        let error = #expect(throws: DepotError.self) { try library.makeInterpreter(for: model) }
        #expect(error?.code == .digestMismatch, "the swapped file has the verified size")
        #expect(error?.message.contains("was not handed to an interpreter") == true)

        let fromVerifiedBytes = try LiteRTInterpreter(bytes: bytes, library: library).run(input)
        #expect(fromVerifiedBytes.first?.float32Values == honest.first?.float32Values, "the bytes verified before the swap are what runs")
    }
}

extension UInt32 {
    fileprivate var littleEndianBytes: [UInt8] { withUnsafeBytes(of: littleEndian) { Array($0) } }
}

/// The LiteRT runtime the bootstrap installs, found through Python.
enum LiteRTRuntime {
    /// Looked up once.
    private static let installed = Task { () -> String? in
        let output = try? await Program.run(
            "python3", ["-c", "import ai_edge_litert, os; print(os.path.join(os.path.dirname(ai_edge_litert.__file__), 'libLiteRt.so'))"])
        guard let output, output.status == 0 else { return nil }
        let path = output.text.trimmingCharacters(in: .whitespacesAndNewlines)
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    /// The path of `libLiteRt.so`; a test that needs it fails (never skips) without it.
    static func libraryPath() async throws -> String {
        guard let installed = await installed.value else {
            throw E2EFailure("LiteRT (ai-edge-litert==2.3.0) is not installed: run scripts/bootstrap to install it")
        }
        return installed
    }

    /// What LiteRT's Python interpreter answers for a float32 [1, n] input.
    static func pythonOutput(model: String, input: [Float]) async throws -> [Float] {
        let script = """
            import json, sys, numpy as np
            from ai_edge_litert.interpreter import Interpreter
            interpreter = Interpreter(model_path=sys.argv[1])
            interpreter.allocate_tensors()
            interpreter.set_tensor(interpreter.get_input_details()[0]['index'], np.array([json.loads(sys.argv[2])], dtype=np.float32))
            interpreter.invoke()
            print(json.dumps(interpreter.get_tensor(interpreter.get_output_details()[0]['index']).flatten().tolist()))
            """
        let output = try await Program.run("python3", ["-c", script, model, "\(input)"])
        let line = output.text.split(separator: "\n").last.map(String.init) ?? ""
        return try JSONDecoder().decode([Float].self, from: Data(line.utf8))
    }
}

/// `depot-classify`, the walk-through example, as a process.
@Suite
struct ClassifyExampleEndToEndTests {
    @Test func exampleDownloadsRunsAndPrintsTheTopLabels() async throws {
        let published = try await PublishedModel(["float_classifier_labels"])
        defer { withExtendedLifetime(published) {} }
        let scratch = published.scratch
        let input: [Float] = [0.9, -0.3, 0.25, 0.5]
        try Data(input.flatMap { withUnsafeBytes(of: $0.bitPattern.littleEndian) { Array($0) } }).write(
            to: URL(fileURLWithPath: scratch.path("input.bin")))
        try "daisy\nrose\ntulip\n".write(toFile: scratch.path("labels.txt"), atomically: true, encoding: .utf8)

        let output = try await Program.run(
            Binaries.depot.deletingLastPathComponent().appendingPathComponent("depot-classify"),
            [
                "--server", published.server.url.absoluteString, "--key", published.appKey, "--root-key", published.root.publicKey,
                "--model", "flowers", "--input", scratch.path("input.bin"),
                "--labels", scratch.path("labels.txt"), "--litert", await LiteRTRuntime.libraryPath(), "--cache", scratch.path("cache"),
            ])
        #expect(output.status == 0, "\(output.error)")
        let reference = try await LiteRTRuntime.pythonOutput(model: Binaries.fixture("float_classifier_labels"), input: input)
        let best = try #require(reference.indices.max { reference[$0] < reference[$1] })
        let lines = output.text.split(separator: "\n")
        #expect(lines.first?.hasPrefix("flowers v1 (sha256 ") == true)
        #expect(lines.dropFirst().first == "\(["daisy", "rose", "tulip"][best]): \(String(format: "%.4f", reference[best]))")
        #expect(lines.count == 4)
    }

    @Test func exampleClassifiesAnImageWithTheModelsOwnLabels() async throws {
        let published = try await PublishedModel(["metadata/image_classifier"])
        defer { withExtendedLifetime(published) {} }
        let image = Binaries.repository.appendingPathComponent("Tests/Fixtures/images/scene_50x37.png").path
        let output = try await Program.run(
            Binaries.depot.deletingLastPathComponent().appendingPathComponent("depot-classify"),
            [
                "--server", published.server.url.absoluteString, "--key", published.appKey, "--root-key", published.root.publicKey,
                "--model", "flowers",
                "--image", image, "--litert", await LiteRTRuntime.libraryPath(), "--cache", published.scratch.path("cache"), "--top", "2",
            ])
        #expect(output.status == 0, "\(output.error)")
        let reference = try await VisionTasksEndToEndTests.reference(
            [VisionTasksEndToEndTests.ReferenceCategory].self,
            ["classify", Binaries.fixture("metadata/image_classifier"), image, "2"])
        #expect(output.text.split(separator: "\n").dropFirst() == reference.map { "\($0.label): \(String(format: "%.4f", $0.score))" }[...])

        let neither = try await Program.run(
            Binaries.depot.deletingLastPathComponent().appendingPathComponent("depot-classify"),
            [
                "--server", published.server.url.absoluteString, "--key", published.appKey, "--root-key", published.root.publicKey,
                "--model", "flowers",
                "--litert", "/nonexistent",
            ])
        #expect(neither.status != 0)
        #expect(neither.error.contains("Give either --image or --input."))
    }

    @Test func aModelTheTaskCannotUseEndsWithItsErrorNotACrash() async throws {
        let published = try await PublishedModel(["float_classifier"])
        defer { withExtendedLifetime(published) {} }
        let image = Binaries.repository.appendingPathComponent("Tests/Fixtures/images/scene_50x37.png").path
        let frames = published.scratch.url.appendingPathComponent("frames")
        try FileManager.default.createDirectory(at: frames, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: image, toPath: frames.appendingPathComponent("frame0.png").path)
        for _ in 0..<3 {
            let output = try await Program.run(
                Binaries.depot.deletingLastPathComponent().appendingPathComponent("depot-classify"),
                [
                    "--server", published.server.url.absoluteString, "--key", published.appKey, "--root-key", published.root.publicKey,
                    "--model", "flowers",
                    "--image", image, "--litert", await LiteRTRuntime.libraryPath(), "--cache", published.scratch.path("cache"),
                ])
            #expect(output.status == 1, "exits with the error's code, not a signal: \(output.status) \(output.error.suffix(300))")
            #expect(output.error.contains("unsupported_model"), "\(output.error.suffix(300))")
        }
        // The detect and track examples too, with the classifier where a detector belongs.
        for (example, model) in [("depot-detect", "--model"), ("depot-track", "--detector")] {
            let output = try await Program.run(
                Binaries.depot.deletingLastPathComponent().appendingPathComponent(example),
                [
                    "--server", published.server.url.absoluteString, "--key", published.appKey, "--root-key", published.root.publicKey,
                    model, "flowers", "--litert", await LiteRTRuntime.libraryPath(), "--cache", published.scratch.path("cache-\(example)"),
                ] + (example == "depot-detect" ? ["--image", image] : ["--frames", published.scratch.path("frames")]))
            #expect(output.status == 1, "\(example) exits with the error's code: \(output.status) \(output.error.suffix(300))")
            #expect(output.error.contains("unsupported_model"), "\(example): \(output.error.suffix(300))")
        }
    }

    @Test func detectExamplePrintsLabelledBoxes() async throws {
        let published = try await PublishedModel([])
        defer { withExtendedLifetime(published) {} }
        let automl = Binaries.repository.appendingPathComponent("Tests/Fixtures/automl/object_detection").path
        try await Command.depot(["upload", "flowers", automl, "--publish"], environment: published.server.environment).succeeded()
        let image = Binaries.repository.appendingPathComponent("Tests/Fixtures/images/scene_300x200.png").path
        let output = try await Program.run(
            Binaries.depot.deletingLastPathComponent().appendingPathComponent("depot-detect"),
            [
                "--server", published.server.url.absoluteString, "--key", published.appKey, "--root-key", published.root.publicKey,
                "--model", "flowers",
                "--image", image, "--litert", await LiteRTRuntime.libraryPath(), "--cache", published.scratch.path("cache"), "--threshold",
                "0.995",
            ])
        #expect(output.status == 0, "\(output.error)")
        let reference = try await VisionTasksEndToEndTests.reference(
            [VisionTasksEndToEndTests.ReferenceDetection].self,
            ["detect", Binaries.fixture("metadata/object_detector"), image, "0.995"])
        let lines = output.text.split(separator: "\n")
        #expect(lines.first?.hasSuffix("300x200 image") == true)
        #expect(lines.dropFirst().map { String($0.prefix { $0 != ":" }) } == reference.map(\.label))
        #expect(lines.count == reference.count + 1 && reference.count >= 2)
    }
}
