import ModelDepotShared

/// A frame as iOS and Android cameras deliver it: 32-bit BGRA or RGBA, or YUV 4:2:0 bi-planar
/// (NV12: U then V; NV21: V then U) or planar (I420), each plane with its own row stride, in
/// BT.601 or BT.709, video or full range, and the orientation that stands it upright.
/// ``upright()`` gives the RGB image a vision task takes, converted as libyuv converts it.
///
/// ```swift
/// let frame = try CameraFrame(width: 640, height: 480, format: .nv12,
///                             planes: [.init(bytes: y, rowStride: 640), .init(bytes: uv, rowStride: 640)],
///                             orientation: .right)
/// let image = try frame.upright()   // 480x640 RGB
/// ```
public struct CameraFrame: Sendable {
    /// How the frame's pixels are laid out.
    public enum Format: Sendable, Hashable {
        /// One plane, 4 bytes a pixel: blue, green, red, alpha (iOS's `kCVPixelFormatType_32BGRA`).
        case bgra
        /// One plane, 4 bytes a pixel: red, green, blue, alpha.
        case rgba
        /// Two planes: Y, then U and V interleaved at half width and height (iOS's 420f/420v).
        case nv12
        /// Two planes: Y, then V and U interleaved at half width and height (Android's NV21).
        case nv21
        /// Three planes: Y, U, V, the last two at half width and height (Android's YUV_420_888
        /// with a pixel stride of 1).
        case i420

        var planeCount: Int {
            switch self {
            case .bgra, .rgba: 1
            case .nv12, .nv21: 2
            case .i420: 3
            }
        }
    }

    /// How YUV maps to RGB.
    public enum ColorSpace: Sendable, Hashable {
        /// SD video, and what Android's cameras and JPEG use.
        case bt601
        /// HD video, and iOS's cameras.
        case bt709
    }

    /// The YUV values' range.
    public enum ColorRange: Sendable, Hashable {
        /// Y 16-235, U and V 16-240 (iOS's `420v`).
        case video
        /// 0-255 (iOS's `420f`, JPEG).
        case full
    }

    /// One plane: its bytes, and how many bytes lie between the starts of two rows.
    public struct Plane: Sendable {
        public var bytes: [UInt8]
        public var rowStride: Int

        public init(bytes: [UInt8], rowStride: Int) {
            self.bytes = bytes
            self.rowStride = rowStride
        }
    }

    public let width: Int
    public let height: Int
    public let format: Format
    public let planes: [Plane]
    public let colorSpace: ColorSpace
    public let colorRange: ColorRange
    public let orientation: FrameOrientation

    /// Checks that every plane holds its rows; the last row of a plane need not be padded to
    /// its stride.
    /// - Throws: ``DepotError`` (`invalid_image`) naming the plane and what it lacks.
    public init(width: Int, height: Int, format: Format, planes: [Plane], colorSpace: ColorSpace = .bt601,
                colorRange: ColorRange = .video, orientation: FrameOrientation = .up) throws(DepotError) {
        guard width > 0, height > 0, width <= PixelBuffer.maximumPixels / height else {
            throw DepotError(.invalidImage, "A frame of \(width)x\(height) pixels is not allowed: both sides must be positive and the frame at most \(PixelBuffer.maximumPixels) pixels.")
        }
        guard planes.count == format.planeCount else {
            throw DepotError(.invalidImage, "A \(format) frame has \(format.planeCount) plane(s); \(planes.count) were given.")
        }
        let chroma = ((width + 1) / 2, (height + 1) / 2)
        let shapes: [(rowBytes: Int, rows: Int)] = switch format {
        case .bgra, .rgba: [(width * 4, height)]
        case .nv12, .nv21: [(width, height), (chroma.0 * 2, chroma.1)]
        case .i420: [(width, height), (chroma.0, chroma.1), (chroma.0, chroma.1)]
        }
        for (index, (plane, shape)) in zip(planes, shapes).enumerated() {
            guard plane.rowStride >= shape.rowBytes, plane.rowStride <= Int(Int32.max) else {
                throw DepotError(.invalidImage, "Plane \(index) of a \(width)x\(height) \(format) frame has a row stride of \(plane.rowStride) bytes; its rows need \(shape.rowBytes) at least.")
            }
            let needed = plane.rowStride * (shape.rows - 1) + shape.rowBytes
            guard plane.bytes.count >= needed else {
                throw DepotError(.invalidImage, "Plane \(index) of a \(width)x\(height) \(format) frame holds \(plane.bytes.count) bytes; its \(shape.rows) rows of stride \(plane.rowStride) need \(needed).")
            }
        }
        self.width = width
        self.height = height
        self.format = format
        self.planes = planes
        self.colorSpace = colorSpace
        self.colorRange = colorRange
        self.orientation = orientation
    }

    /// The frame as an upright RGB image: converted (YUV as libyuv does, each chroma sample
    /// shared by its 2x2 pixels; BGRA and RGBA without their alpha), then mirrored and rotated.
    public func upright() throws(DepotError) -> PixelBuffer {
        let (outWidth, outHeight) = orientation.uprightSize(width: width, height: height)
        let conversion: YUVConversion = switch (colorSpace, colorRange) {
        case (.bt601, .video): .bt601Video
        case (.bt601, .full): .bt601Full
        case (.bt709, .video): .bt709Video
        case (.bt709, .full): .bt709Full
        }
        var rgb = [UInt8](repeating: 0, count: outWidth * outHeight * 3)
        rgb.withUnsafeMutableBufferPointer { out in
            var index = 0
            for y in 0..<outHeight {
                for x in 0..<outWidth {
                    let source = orientation.source(ofX: x, y: y, width: width, height: height)
                    (out[index], out[index + 1], out[index + 2]) = pixel(x: source.x, y: source.y, conversion)
                    index += 3
                }
            }
        }
        return try PixelBuffer(width: outWidth, height: outHeight, format: .rgb8, bytes: rgb)
    }

    /// The red, green and blue of the frame's pixel (`x`, `y`).
    @inline(__always)
    private func pixel(x: Int, y: Int, _ conversion: YUVConversion) -> (UInt8, UInt8, UInt8) {
        switch format {
        case .bgra:
            let base = y * planes[0].rowStride + x * 4
            return (planes[0].bytes[base + 2], planes[0].bytes[base + 1], planes[0].bytes[base])
        case .rgba:
            let base = y * planes[0].rowStride + x * 4
            return (planes[0].bytes[base], planes[0].bytes[base + 1], planes[0].bytes[base + 2])
        case .nv12, .nv21:
            let luma = planes[0].bytes[y * planes[0].rowStride + x]
            let base = (y / 2) * planes[1].rowStride + (x / 2) * 2
            let (first, second) = (planes[1].bytes[base], planes[1].bytes[base + 1])
            return format == .nv12 ? conversion.rgb(y: luma, u: first, v: second) : conversion.rgb(y: luma, u: second, v: first)
        case .i420:
            let luma = planes[0].bytes[y * planes[0].rowStride + x]
            let u = planes[1].bytes[(y / 2) * planes[1].rowStride + x / 2]
            let v = planes[2].bytes[(y / 2) * planes[2].rowStride + x / 2]
            return conversion.rgb(y: luma, u: u, v: v)
        }
    }
}
