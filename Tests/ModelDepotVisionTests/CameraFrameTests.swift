import Foundation
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepotVision

/// Camera frames to upright RGB: YUV 4:2:0 (NV12, NV21, I420) in BT.601 and BT.709, video and
/// full range, equal to libyuv's conversion (scripts/tflite/libyuv_frame_reference.py calls
/// Debian's libyuv0, the Task Library's converter) with every orientation ML Kit names; BGRA and
/// RGBA with row padding; and frames that do not hold what they claim refused.
@Suite struct CameraFrameTests {
    static let reference = PixelBufferTests.root.appendingPathComponent("scripts/tflite/libyuv_frame_reference.py").path
    static let orientations: [(String, FrameOrientation)] = [
        ("up", .up), ("right", .right), ("down", .down), ("left", .left), ("upMirrored", .upMirrored), ("rightMirrored", .rightMirrored),
        ("downMirrored", .downMirrored), ("leftMirrored", .leftMirrored),
    ]

    struct Case: CustomStringConvertible {
        var format: CameraFrame.Format
        var colorSpace: CameraFrame.ColorSpace
        var range: CameraFrame.ColorRange
        var orientation: (String, FrameOrientation)
        /// Bytes added to each plane's rows.
        var padding: Int
        var description: String { "\(format) \(colorSpace) \(range) \(orientation.0), padding \(padding)" }
    }

    /// The frame made from `source` (RGBA, by libyuv's ARGBToI420) or from `planes` as they are,
    /// and libyuv's upright RGB of it.
    static func libyuv(_ test: Case, width: Int, height: Int, source: [UInt8]? = nil, planes: [[UInt8]] = []) async throws -> (
        CameraFrame, [UInt8]
    ) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("camera-frame-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let chroma = (width + 1) / 2
        let rowBytes =
            switch test.format {
            case .i420: [width, chroma, chroma]
            default: [width, chroma * 2]
            }
        let strides = rowBytes.map { $0 + test.padding }
        if let source { try Data(source).write(to: directory.appendingPathComponent("source.rgba")) }
        for (index, plane) in planes.enumerated() { try Data(plane).write(to: directory.appendingPathComponent("plane\(index).bin")) }
        let request: [String: Any] = [
            "width": width, "height": height, "format": "\(test.format)", "colorSpace": "\(test.colorSpace)", "range": "\(test.range)",
            "rotation": test.orientation.1.rotation, "mirrored": test.orientation.1.mirrored, "strides": strides,
            "source": source == nil ? "random" : "rgba",
        ]
        try JSONSerialization.data(withJSONObject: request).write(to: directory.appendingPathComponent("request.json"))
        let run = try await Program.run("python3", [reference, directory.path])
        try #require(run.status == 0, "libyuv_frame_reference.py: \(run.error)")
        let read = try (0..<rowBytes.count).map { Array(try Data(contentsOf: directory.appendingPathComponent("plane\($0).bin"))) }
        let frame = try CameraFrame(
            width: width, height: height, format: test.format,
            planes: zip(read, strides).map { CameraFrame.Plane(bytes: $0, rowStride: $1) },
            colorSpace: test.colorSpace, colorRange: test.range, orientation: test.orientation.1)
        return (frame, Array(try Data(contentsOf: directory.appendingPathComponent("libyuv.rgb"))))
    }

    static func largestDifference(_ a: [UInt8], _ b: [UInt8]) -> Int {
        zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 0
    }

    static var cases: [Case] {
        var cases: [Case] = []
        for format in [CameraFrame.Format.nv12, .nv21, .i420] {
            for (colorSpace, range) in [
                (CameraFrame.ColorSpace.bt601, CameraFrame.ColorRange.video), (.bt601, .full), (.bt709, .video), (.bt709, .full),
            ] {
                for orientation in [orientations[0], orientations[7]] {
                    cases.append(Case(format: format, colorSpace: colorSpace, range: range, orientation: orientation, padding: 0))
                }
            }
        }
        for orientation in orientations {
            cases.append(Case(format: .nv21, colorSpace: .bt601, range: .video, orientation: orientation, padding: 7))
        }
        return cases
    }

    @Test func framesFromAPhotoEqualLibyuvsConversion() async throws {
        let photo = try PixelBufferTests.image("scene_50x37.png").rgb()
        let rgba: [UInt8] = stride(from: 0, to: photo.bytes.count, by: 3).flatMap { (start: Int) -> [UInt8] in
            Array(photo.bytes[start..<(start + 3)]) + [255]
        }
        for test in Self.cases {
            let (frame, expected) = try await Self.libyuv(test, width: 50, height: 37, source: rgba)
            let ours = try frame.upright()
            let size = test.orientation.1.rotation % 180 == 0 ? (50, 37) : (37, 50)
            #expect((ours.width, ours.height) == size, "\(test)")
            #expect(Self.largestDifference(ours.bytes, expected) <= 1 && ours.bytes.count == expected.count, "\(test)")
        }
    }

    @Test func randomYUVIncludingValuesOutsideTheGamutEqualsLibyuv() async throws {
        var random = SeededGenerator(seed: 28)
        for test in Self.cases {
            let (width, height) = (33, 21)
            let chroma = (17, 11)
            let rowBytes = test.format == .i420 ? [width, chroma.0, chroma.0] : [width, chroma.0 * 2]
            let rows = test.format == .i420 ? [height, chroma.1, chroma.1] : [height, chroma.1]
            let planes = zip(rowBytes, rows).map { rowBytes, rows in
                (0..<((rowBytes + test.padding) * rows)).map { _ in UInt8.random(in: 0...255, using: &random) }
            }
            let (frame, expected) = try await Self.libyuv(test, width: width, height: height, planes: planes)
            let ours = try frame.upright()
            #expect(Self.largestDifference(ours.bytes, expected) <= 1 && ours.bytes.count == expected.count, "\(test)")
        }
    }

    @Test func knownColoursComeBackThroughYUV() async throws {
        // 2x2 blocks of eight colours: one chroma sample each, so only YUV's rounding remains.
        let colours: [[UInt8]] = [
            [255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255], [0, 0, 0], [255, 255, 0], [30, 144, 255], [128, 64, 32],
        ]
        let (width, height) = (16, 8)
        let rgba: [UInt8] = (0..<(width * height)).flatMap { (index: Int) -> [UInt8] in
            colours[((index % width) / 2 + (index / width) / 2 * 8) % 8] + [255]
        }
        let test = Case(format: .nv12, colorSpace: .bt601, range: .video, orientation: Self.orientations[0], padding: 0)
        let (frame, _) = try await Self.libyuv(test, width: width, height: height, source: rgba)
        let ours = try frame.upright()
        let original: [UInt8] = stride(from: 0, to: rgba.count, by: 4).flatMap { (start: Int) -> [UInt8] in Array(rgba[start..<(start + 3)])
        }
        #expect(Self.largestDifference(ours.bytes, original) <= 4, "\(ours.bytes.prefix(12)) vs \(original.prefix(12))")
    }

    @Test func bgraAndRgbaKeepTheirPixelsThroughPaddingAndOrientation() throws {
        // A 3x2 frame: pixels 1...6 in rows of 3, each a distinct red value; rows padded by 5 bytes.
        let reds: [UInt8] = [10, 20, 30, 40, 50, 60]
        let padding = [UInt8](repeating: 0xEE, count: 5)
        let rgba: [UInt8] = (0..<2).flatMap { (row: Int) -> [UInt8] in
            (0..<3).flatMap { (column: Int) -> [UInt8] in [reds[row * 3 + column], 7, 9, 255] } + padding
        }
        let bgra: [UInt8] = (0..<2).flatMap { (row: Int) -> [UInt8] in
            (0..<3).flatMap { (column: Int) -> [UInt8] in [9, 7, reds[row * 3 + column], 255] } + padding
        }
        let expected: [(FrameOrientation, Int, [UInt8])] = [
            (.up, 3, [10, 20, 30, 40, 50, 60]), (.right, 2, [40, 10, 50, 20, 60, 30]), (.down, 3, [60, 50, 40, 30, 20, 10]),
            (.left, 2, [30, 60, 20, 50, 10, 40]), (.upMirrored, 3, [30, 20, 10, 60, 50, 40]),
            (.rightMirrored, 2, [60, 30, 50, 20, 40, 10]),
            (.downMirrored, 3, [40, 50, 60, 10, 20, 30]), (.leftMirrored, 2, [10, 40, 20, 50, 30, 60]),
        ]
        for (format, bytes) in [(CameraFrame.Format.rgba, rgba), (.bgra, bgra)] {
            for (orientation, width, reds) in expected {
                let frame = try CameraFrame(
                    width: 3, height: 2, format: format, planes: [.init(bytes: bytes, rowStride: 17)], orientation: orientation)
                let image = try frame.upright()
                #expect(image.width == width && image.format == .rgb8, "\(format) \(orientation)")
                #expect(image.bytes == reds.flatMap { (red: UInt8) -> [UInt8] in [red, 7, 9] }, "\(format) \(orientation)")
            }
        }
    }

    @Test func framesThatDoNotHoldWhatTheyClaimAreRefused() throws {
        let y = [UInt8](repeating: 16, count: 64 * 48)
        let uv = [UInt8](repeating: 128, count: 64 * 24)
        let refused: [(String, () throws -> CameraFrame)] = [
            (
                "no pixels",
                {
                    try CameraFrame(
                        width: 0, height: 48, format: .nv12, planes: [.init(bytes: y, rowStride: 64), .init(bytes: uv, rowStride: 64)])
                }
            ),
            (
                "negative",
                {
                    try CameraFrame(
                        width: -64, height: -48, format: .nv12, planes: [.init(bytes: y, rowStride: 64), .init(bytes: uv, rowStride: 64)])
                }
            ),
            (
                "too large",
                {
                    try CameraFrame(
                        width: Int.max / 2, height: 3, format: .nv12,
                        planes: [.init(bytes: y, rowStride: 64), .init(bytes: uv, rowStride: 64)])
                }
            ),
            ("one plane for two", { try CameraFrame(width: 64, height: 48, format: .nv12, planes: [.init(bytes: y, rowStride: 64)]) }),
            (
                "a short chroma plane",
                {
                    try CameraFrame(
                        width: 64, height: 48, format: .nv21,
                        planes: [.init(bytes: y, rowStride: 64), .init(bytes: Array(uv.dropLast()), rowStride: 64)])
                }
            ),
            (
                "a stride under the width",
                {
                    try CameraFrame(
                        width: 64, height: 48, format: .i420,
                        planes: [.init(bytes: y, rowStride: 63), .init(bytes: uv, rowStride: 32), .init(bytes: uv, rowStride: 32)])
                }
            ),
            (
                "a stride past 32 bits",
                { try CameraFrame(width: 64, height: 48, format: .bgra, planes: [.init(bytes: y, rowStride: Int.max)]) }
            ),
            (
                "BGRA rows of 3 bytes a pixel",
                { try CameraFrame(width: 64, height: 48, format: .bgra, planes: [.init(bytes: y + y + y, rowStride: 192)]) }
            ),
        ]
        for (name, make) in refused {
            let error = #expect(throws: DepotError.self, "\(name)") { try make() }
            #expect(error?.code == .invalidImage, "\(name)")
        }
        #expect(throws: DepotError.self) { try FrameOrientation(rotation: 45) }
        let odd = try CameraFrame(
            width: 3, height: 3, format: .i420,
            planes: [
                .init(bytes: [UInt8](repeating: 100, count: 9), rowStride: 3),
                .init(bytes: [128, 128, 128, 128], rowStride: 2),
                .init(bytes: [128, 128, 128, 128], rowStride: 2),
            ])
        #expect(try odd.upright().bytes.count == 27, "odd sizes round their chroma up")
    }
}
