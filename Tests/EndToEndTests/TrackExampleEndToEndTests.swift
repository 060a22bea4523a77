import Foundation
import ModelDepot
import ModelDepotLiteRT
import ModelDepotShared
import TestSupport
import Testing

/// `depot-track`, the detect-track-classify example, as a process: its JSON lines equal
/// `CustomObjectDetector`'s results on the same frames, from PNGs and from a raw NV12 file.
@Suite struct TrackExampleEndToEndTests {
    struct Line: Decodable, Equatable {
        struct Object: Decodable, Equatable {
            struct Label: Decodable, Equatable { let index: Int, text: String, confidence: Float }
            let id: Int?, x: Int, y: Int, width: Int, height: Int
            let labels: [Label]
        }
        let frame: Int
        let objects: [Object]
    }

    let scene = BlockScene()
    /// The three blocks, then the red one moved a cell right.
    var scenes: [[BlockScene.Block]] {
        let three = CustomObjectDetectorEndToEndTests.three
        return [three, three, three, [BlockScene.Block(column: 1, row: 0, rgb: BlockScene.red)] + three.dropFirst()]
    }

    func track(_ published: PublishedModel, _ arguments: [String]) async throws -> Program.Output {
        try await Program.run(
            Binaries.depot.deletingLastPathComponent().appendingPathComponent("depot-track"),
            [
                "--server", published.server.url.absoluteString, "--key", published.appKey, "--root-key", published.root.publicKey,
                "--detector", "flowers", "--litert", await LiteRTRuntime.libraryPath(), "--cache", published.scratch.path("track-cache"),
            ] + arguments)
    }

    func expected(_ objects: [CustomObjectDetector.DetectedObject], frame: Int) -> Line {
        Line(
            frame: frame,
            objects: objects.map {
                .init(
                    id: $0.trackingID, x: $0.frame.x, y: $0.frame.y, width: $0.frame.width, height: $0.frame.height,
                    labels: $0.labels.map { .init(index: $0.index, text: $0.text, confidence: $0.confidence) })
            })
    }

    func lines(_ output: Program.Output) throws -> [Line] {
        try output.text.split(separator: "\n").map { try JSONDecoder().decode(Line.self, from: Data($0.utf8)) }
    }

    @Test func pngFramesGiveTheDetectorsTrackedLabelledObjects() async throws {
        let (published, detector, classifier) = try await CustomObjectDetectorEndToEndTests.models()
        defer { withExtendedLifetime(published) {} }
        let folder = published.scratch.path("frames")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (index, blocks) in scenes.enumerated() {
            try Data(scene.rgb(blocks)).write(to: URL(fileURLWithPath: "\(folder)/frame\(index).rgb"))
        }
        // PNGs written by Python's zlib, one filter-0 row at a time.
        let png = """
            import glob, struct, sys, zlib
            width, height = int(sys.argv[2]), int(sys.argv[3])
            for raw in glob.glob(sys.argv[1] + "/*.rgb"):
                data = open(raw, "rb").read()
                rows = b"".join(b"\\0" + data[y * width * 3:(y + 1) * width * 3] for y in range(height))
                chunk = lambda kind, body: struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
                open(raw[:-4] + ".png", "wb").write(b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                                                   + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
            """
        #expect(try await Program.run("python3", ["-c", png, folder, "\(scene.width)", "\(scene.height)"]).status == 0)
        let output = try await track(published, ["--classifier", "colours", "--multiple", "--frames", folder])
        #expect(output.status == 0, "\(output.error)")

        let pipeline = try await CustomObjectDetector(
            detector: detector, classifier: classifier, library: try CustomObjectDetectorEndToEndTests.library(),
            options: .init(shouldEnableMultipleObjects: true, shouldEnableClassification: true))
        let reference = try scenes.indices.map { index in
            expected(try pipeline.results(in: try PixelBuffer(contentsOfFile: "\(folder)/frame\(index).png")), frame: index)
        }
        let printed = try lines(output)
        #expect(printed == reference)
        // The moved block is a new object, reported from its second frame.
        #expect(
            printed.map(\.objects.count) == [3, 3, 3, 2]
                && printed.allSatisfy { $0.objects.allSatisfy { !$0.labels.isEmpty && $0.id != nil } })
    }

    @Test func rawNV12FramesAreReadOneAtATimeAndATruncatedFileIsRefused() async throws {
        let (published, detector, _) = try await CustomObjectDetectorEndToEndTests.models()
        defer { withExtendedLifetime(published) {} }
        // A scene 240 wide and 320 high from a sensor on its side: 320x240 frames turned by 90°.
        let upright = BlockScene(width: 240, height: 320)
        let frames = try scenes.map { try upright.turnedFrame($0) }
        let file = published.scratch.path("frames.nv12")
        try Data(frames.flatMap { $0.planes[0].bytes + $0.planes[1].bytes }).write(to: URL(fileURLWithPath: file))
        let output = try await track(
            published,
            ["--nv12", file, "--width", "320", "--height", "240", "--full-range", "--rotation", "90", "--single-image", "--multiple"])
        #expect(output.status == 0, "\(output.error)")
        let pipeline = try await CustomObjectDetector(
            detector: detector, library: try CustomObjectDetectorEndToEndTests.library(),
            options: .init(detectorMode: .singleImage, shouldEnableMultipleObjects: true))
        // What the same scenes give upright.
        let reference = try scenes.enumerated().map { expected(try pipeline.results(in: try upright.frame($0.element)), frame: $0.offset) }
        #expect(try lines(output) == reference)
        #expect(reference.allSatisfy { $0.objects.count == 3 && $0.objects.allSatisfy { $0.id == nil } })

        let cut = published.scratch.path("cut.nv12")
        try Data(try Data(contentsOf: URL(fileURLWithPath: file)).dropLast(100)).write(to: URL(fileURLWithPath: cut))
        let truncated = try await track(published, ["--nv12", cut, "--width", "320", "--height", "240"])
        #expect(truncated.status == 64)
        #expect(truncated.error.contains("ends within a frame: 115100 bytes of 115200"), "\(truncated.error)")
        let huge = try await track(published, ["--nv12", file, "--width", "\(Int.max)", "--height", "3"])
        #expect(huge.status == 64 && huge.error.contains("more than the"), "\(huge.error)")
        let turned = try await track(published, ["--nv12", file, "--width", "320", "--height", "240", "--rotation", "45"])
        #expect(turned.status == 64 && turned.error.contains("--rotation is 45; give 0, 90, 180 or 270."), "\(turned.error)")
        let neither = try await track(published, [])
        #expect(neither.status == 64 && neither.error.contains("Give either --frames DIR or --nv12 FILE."))
        let noLabels = try await track(published, ["--nv12", file, "--width", "320", "--height", "240", "--max-labels", "0"])
        #expect(noLabels.status == 64 && noLabels.error.contains("--max-labels is 0; give 1 or more."), "\(noLabels.error)")
        let bundledAlone = try await track(published, ["--nv12", file, "--width", "320", "--height", "240", "--bundled-classifier", file])
        #expect(
            bundledAlone.status == 64 && bundledAlone.error.contains("--bundled-classifier needs --classifier NAME."),
            "\(bundledAlone.error)")
        let empty = published.scratch.path("no-frames")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let noPNGs = try await track(published, ["--frames", empty])
        #expect(noPNGs.status == 64 && noPNGs.error.contains("holds no .png files"), "\(noPNGs.error)")
    }
}
