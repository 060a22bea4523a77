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
    /// - Throws: `DepotError` (`invalid_image`) naming the plane and what it lacks.
    public init(
        width: Int, height: Int, format: Format, planes: [Plane], colorSpace: ColorSpace = .bt601,
        colorRange: ColorRange = .video, orientation: FrameOrientation = .up
    ) throws(DepotError) {
        try Self.check(width: width, height: height, format: format, planes: planes.map { ($0.bytes.count, $0.rowStride) })
        self.width = width
        self.height = height
        self.format = format
        self.planes = planes
        self.colorSpace = colorSpace
        self.colorRange = colorRange
        self.orientation = orientation
    }

    /// Checks that every plane (its byte count and row stride) holds its rows.
    static func check(width: Int, height: Int, format: Format, planes: [(count: Int, rowStride: Int)]) throws(DepotError) {
        guard width > 0, height > 0, width <= PixelBuffer.maximumPixels / height else {
            throw DepotError(
                .invalidImage,
                "A frame of \(width)x\(height) pixels is not allowed: both sides must be positive and the frame at most \(PixelBuffer.maximumPixels) pixels."
            )
        }
        guard planes.count == format.planeCount else {
            throw DepotError(.invalidImage, "A \(format) frame has \(format.planeCount) plane(s); \(planes.count) were given.")
        }
        let chroma = ((width + 1) / 2, (height + 1) / 2)
        let shapes: [(rowBytes: Int, rows: Int)] =
            switch format {
            case .bgra, .rgba: [(width * 4, height)]
            case .nv12, .nv21: [(width, height), (chroma.0 * 2, chroma.1)]
            case .i420: [(width, height), (chroma.0, chroma.1), (chroma.0, chroma.1)]
            }
        for (index, (plane, shape)) in zip(planes, shapes).enumerated() {
            guard plane.rowStride >= shape.rowBytes, plane.rowStride <= Int(Int32.max) else {
                throw DepotError(
                    .invalidImage,
                    "Plane \(index) of a \(width)x\(height) \(format) frame has a row stride of \(plane.rowStride) bytes; its rows need \(shape.rowBytes) at least."
                )
            }
            let needed = plane.rowStride * (shape.rows - 1) + shape.rowBytes
            guard plane.count >= needed else {
                throw DepotError(
                    .invalidImage,
                    "Plane \(index) of a \(width)x\(height) \(format) frame holds \(plane.count) bytes; its \(shape.rows) rows of stride \(plane.rowStride) need \(needed)."
                )
            }
        }
    }

    /// The frame as an upright RGB image: converted (YUV as libyuv does, each chroma sample
    /// shared by its 2x2 pixels; BGRA and RGBA without their alpha), then mirrored and rotated.
    public func upright() throws(DepotError) -> PixelBuffer {
        let rgb = Self.withViews(of: planes[...], []) { views in
            Self.uprightRGB(
                width: width, height: height, format: format, planes: views, colorSpace: colorSpace, colorRange: colorRange,
                orientation: orientation)
        }
        let (outWidth, outHeight) = orientation.uprightSize(width: width, height: height)
        return try PixelBuffer(width: outWidth, height: outHeight, format: .rgb8, bytes: rgb)
    }

    /// Lends each plane's bytes, in order, for the length of `body`.
    private static func withViews<Result>(
        of planes: ArraySlice<Plane>, _ lent: [PlaneView],
        _ body: ([PlaneView]) -> Result
    ) -> Result {
        guard let plane = planes.first else { return body(lent) }
        return plane.bytes.withUnsafeBytes { bytes in
            withViews(of: planes.dropFirst(), lent + [PlaneView(bytes: bytes, rowStride: plane.rowStride)], body)
        }
    }

    /// A plane where it lies, read in place: a camera buffer's memory, not copied into an array.
    public struct PlaneView {
        /// The plane's bytes, valid for the call they are passed to.
        public var bytes: UnsafeRawBufferPointer
        /// Bytes between the starts of two rows.
        public var rowStride: Int

        /// Names a plane's memory.
        public init(bytes: UnsafeRawBufferPointer, rowStride: Int) {
            self.bytes = bytes
            self.rowStride = rowStride
        }
    }

    /// The upright RGB image of a frame whose planes lie in memory the caller keeps valid for the
    /// call (a locked `CVPixelBuffer`, a camera's image planes): read in place, converted as
    /// ``upright()`` converts a frame, with the same checks.
    /// - Throws: `DepotError` (`invalid_image`) naming the plane and what it lacks.
    public static func upright(
        width: Int, height: Int, format: Format, planes: [PlaneView], colorSpace: ColorSpace = .bt601,
        colorRange: ColorRange = .video, orientation: FrameOrientation = .up
    ) throws(DepotError) -> PixelBuffer {
        try check(width: width, height: height, format: format, planes: planes.map { ($0.bytes.count, $0.rowStride) })
        let rgb = uprightRGB(
            width: width, height: height, format: format, planes: planes, colorSpace: colorSpace, colorRange: colorRange,
            orientation: orientation)
        let (outWidth, outHeight) = orientation.uprightSize(width: width, height: height)
        return try PixelBuffer(width: outWidth, height: outHeight, format: .rgb8, bytes: rgb)
    }

    /// Converts checked planes into the upright image's RGB bytes.
    private static func uprightRGB(
        width: Int, height: Int, format: Format, planes: [PlaneView], colorSpace: ColorSpace,
        colorRange: ColorRange, orientation: FrameOrientation
    ) -> [UInt8] {
        let (outWidth, outHeight) = orientation.uprightSize(width: width, height: height)
        let conversion: YUVConversion =
            switch (colorSpace, colorRange) {
            case (.bt601, .video): .bt601Video
            case (.bt601, .full): .bt601Full
            case (.bt709, .video): .bt709Video
            case (.bt709, .full): .bt709Full
            }
        // Where the frame's pixel (0, 0) lands in the upright image, and how far one step right
        // and one row down move it there (in pixels).
        let place = orientation.destination(ofX: 0, y: 0, width: width, height: height)
        let right = orientation.destination(ofX: 1, y: 0, width: width, height: height)
        let down = orientation.destination(ofX: 0, y: 1, width: width, height: height)
        let origin = place.y * outWidth + place.x
        let stepX = (right.y - place.y) * outWidth + (right.x - place.x)
        let stepY = (down.y - place.y) * outWidth + (down.x - place.x)
        return [UInt8](unsafeUninitializedCapacity: outWidth * outHeight * 3) { out, count in
            for y in 0..<height {
                convertRow(
                    y, width: width, format: format, planes: planes, into: out.baseAddress!, at: origin + y * stepY, step: stepX, conversion
                )
            }
            count = outWidth * outHeight * 3
        }
    }

    /// Converts the frame's row `y`, writing its pixel `x` at pixel `start + x * step` of `out`.
    private static func convertRow(
        _ y: Int, width: Int, format: Format, planes: [PlaneView], into out: UnsafeMutablePointer<UInt8>,
        at start: Int, step: Int, _ conversion: YUVConversion
    ) {
        @inline(__always) func write(_ x: Int, _ pixel: (UInt8, UInt8, UInt8)) {
            let target = (start + x * step) * 3
            (out[target], out[target + 1], out[target + 2]) = pixel
        }
        let row = planes[0].bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + y * planes[0].rowStride
        switch format {
        case .bgra:
            for x in 0..<width { write(x, (row[x * 4 + 2], row[x * 4 + 1], row[x * 4])) }
        case .rgba:
            for x in 0..<width { write(x, (row[x * 4], row[x * 4 + 1], row[x * 4 + 2])) }
        case .nv12, .nv21:
            let chroma = planes[1].bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + (y / 2) * planes[1].rowStride
            let (uOffset, vOffset) = format == .nv12 ? (0, 1) : (1, 0)
            for x in 0..<width {
                write(x, conversion.rgb(y: row[x], u: chroma[(x / 2) * 2 + uOffset], v: chroma[(x / 2) * 2 + vOffset]))
            }
        case .i420:
            let u = planes[1].bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + (y / 2) * planes[1].rowStride
            let v = planes[2].bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + (y / 2) * planes[2].rowStride
            for x in 0..<width { write(x, conversion.rgb(y: row[x], u: u[x / 2], v: v[x / 2])) }
        }
    }
}
