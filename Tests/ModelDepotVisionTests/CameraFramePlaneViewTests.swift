import Foundation
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepotVision

/// Frames read where they lie (a locked `CVPixelBuffer`'s planes on iOS): the same pixels as a
/// frame copied into arrays, the same refusals, and Core Video's pixel formats mapped as a camera
/// delivers them.
@Suite struct CameraFramePlaneViewTests {
    @Test func planesReadInPlaceGiveTheSameImageAsCopiedOnes() throws {
        var random = SeededGenerator(seed: 49)
        let (width, height) = (19, 13)
        let chroma = ((width + 1) / 2, (height + 1) / 2)
        for format in [CameraFrame.Format.bgra, .rgba, .nv12, .nv21, .i420] {
            let shapes: [(rowBytes: Int, rows: Int)] =
                switch format {
                case .bgra, .rgba: [(width * 4, height)]
                case .nv12, .nv21: [(width, height), (chroma.0 * 2, chroma.1)]
                case .i420: [(width, height), (chroma.0, chroma.1), (chroma.0, chroma.1)]
                }
            let planes = shapes.map { shape in
                CameraFrame.Plane(
                    bytes: (0..<((shape.rowBytes + 3) * shape.rows)).map { _ in UInt8.random(in: 0...255, using: &random) },
                    rowStride: shape.rowBytes + 3)
            }
            for orientation in [FrameOrientation.up, .right, .leftMirrored] {
                let copied = try CameraFrame(
                    width: width, height: height, format: format, planes: planes, colorSpace: .bt709, colorRange: .full,
                    orientation: orientation
                ).upright()
                let inPlace = try Self.withViews(planes) { views in
                    try CameraFrame.upright(
                        width: width, height: height, format: format, planes: views, colorSpace: .bt709, colorRange: .full,
                        orientation: orientation)
                }
                #expect(inPlace.bytes == copied.bytes && inPlace.width == copied.width, "\(format) \(orientation)")
            }
        }
    }

    @Test func planesReadInPlaceThatDoNotHoldTheirRowsAreRefused() throws {
        let short = [UInt8](repeating: 0, count: 4 * 4 * 4 - 1)
        let refused = #expect(throws: DepotError.self) {
            try short.withUnsafeBytes { bytes in
                try CameraFrame.upright(width: 4, height: 4, format: .bgra, planes: [.init(bytes: bytes, rowStride: 16)])
            }
        }
        #expect(refused?.code == .invalidImage)
        #expect(refused?.message.contains("holds 63 bytes; its 4 rows of stride 16 need 64") == true)
    }

    @Test func coreVideoPixelFormatsMapAsACameraDeliversThem() throws {
        // kCVPixelFormatType_32BGRA, _420YpCbCr8BiPlanarFullRange, _420YpCbCr8BiPlanarVideoRange.
        let bgra = try CameraFrame.layout(pixelFormat: 0x4247_5241, matrix: nil)
        #expect(bgra.0 == .bgra)
        let full = try CameraFrame.layout(pixelFormat: 0x3432_3066, matrix: nil)
        #expect(full.0 == .nv12 && full.1 == .bt709 && full.2 == .full)
        let video = try CameraFrame.layout(pixelFormat: 0x3432_3076, matrix: "ITU_R_601_4")
        #expect(video.0 == .nv12 && video.1 == .bt601 && video.2 == .video)
        let other = #expect(throws: DepotError.self) { try CameraFrame.layout(pixelFormat: 0x7834_3230, matrix: nil) }
        #expect(other?.message.contains("Pixel format 'x420'") == true)
    }

    /// Lends the planes' bytes for the length of `body`.
    static func withViews<Result>(_ planes: [CameraFrame.Plane], _ body: ([CameraFrame.PlaneView]) throws -> Result) throws -> Result {
        var views: [CameraFrame.PlaneView] = []
        func lend(_ index: Int) throws -> Result {
            guard index < planes.count else { return try body(views) }
            return try planes[index].bytes.withUnsafeBytes { bytes in
                views.append(CameraFrame.PlaneView(bytes: bytes, rowStride: planes[index].rowStride))
                return try lend(index + 1)
            }
        }
        return try lend(0)
    }
}
