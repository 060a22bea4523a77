import Foundation
import ModelDepotShared

/// An 8-bit image in memory: RGB or RGBA, rows top to bottom, tightly packed. What the vision
/// tasks take: decoded from PNG or PPM here, or from a camera frame the app already has.
///
/// ```swift
/// let image = try PixelBuffer(contentsOfFile: "photo.png")
/// let input = try image.rgb().resized(width: 224, height: 224)
/// ```
public struct PixelBuffer: Sendable, Hashable {
    /// How the bytes of one pixel are laid out.
    public enum Format: Sendable, Hashable {
        case rgb8
        case rgba8

        /// Bytes per pixel.
        public var bytesPerPixel: Int { self == .rgb8 ? 3 : 4 }
    }

    /// The most pixels an image may have (64 megapixels).
    public static let maximumPixels = 64 << 20

    public let width: Int
    public let height: Int
    public let format: Format
    /// `width * height * format.bytesPerPixel` bytes.
    public let bytes: [UInt8]

    /// Wraps pixels.
    /// - Throws: `DepotError` (`invalid_image`) when the sizes are not positive, too large, or
    ///   do not match the bytes.
    public init(width: Int, height: Int, format: Format, bytes: [UInt8]) throws(DepotError) {
        guard width > 0, height > 0, width <= Self.maximumPixels / height else {
            throw DepotError(
                .invalidImage,
                "An image of \(width)x\(height) pixels is not allowed: both sides must be positive and the image at most \(Self.maximumPixels) pixels."
            )
        }
        guard bytes.count == width * height * format.bytesPerPixel else {
            throw DepotError(
                .invalidImage,
                "A \(width)x\(height) \(format) image needs \(width * height * format.bytesPerPixel) bytes; \(bytes.count) were given.")
        }
        self.width = width
        self.height = height
        self.format = format
        self.bytes = bytes
    }

    /// Reads a PNG or binary PPM/PGM file, told apart by their first bytes.
    /// - Throws: `DepotError`: `file_unreadable`, or `invalid_image` naming what is wrong.
    public init(contentsOfFile path: String) throws(DepotError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DepotError(.fileUnreadable, "Could not read the image '\(path)'.")
        }
        let bytes = Array(data)
        if bytes.starts(with: PNGDecoder.signature) {
            self = try PixelBuffer(png: bytes)
        } else if bytes.starts(with: Array("P6".utf8)) || bytes.starts(with: Array("P5".utf8)) {
            self = try PixelBuffer(ppm: bytes)
        } else {
            throw DepotError(.invalidImage, "'\(path)' is neither a PNG nor a binary PPM/PGM image.")
        }
    }

    /// The same image without alpha.
    public func rgb() -> PixelBuffer {
        guard format == .rgba8 else { return self }
        var rgb = [UInt8]()
        rgb.reserveCapacity(width * height * 3)
        for pixel in stride(from: 0, to: bytes.count, by: 4) { rgb += bytes[pixel..<(pixel + 3)] }
        return try! PixelBuffer(width: width, height: height, format: .rgb8, bytes: rgb)
    }

    /// A part of the image (or all of it), resized as the TFLite Task Library resizes images
    /// (see `BilinearScaler`): whole, ignoring the aspect ratio.
    /// - Parameters:
    ///   - newWidth: The new width.
    ///   - newHeight: The new height.
    ///   - region: The part to resize; the whole image when `nil`.
    /// - Throws: `DepotError` (`invalid_image`) for a region outside the image or a size that is not positive.
    public func resized(width newWidth: Int, height newHeight: Int, region: PixelRegion? = nil) throws(DepotError) -> PixelBuffer {
        let area = region ?? PixelRegion(x: 0, y: 0, width: width, height: height)
        guard area.width > 0, area.height > 0, area.x >= 0, area.y >= 0, area.x + area.width <= width, area.y + area.height <= height else {
            throw DepotError(.invalidImage, "The region \(area) is not inside the \(width)x\(height) image.")
        }
        guard newWidth > 0, newHeight > 0, newWidth <= Self.maximumPixels / newHeight else {
            throw DepotError(.invalidImage, "Cannot resize to \(newWidth)x\(newHeight) pixels.")
        }
        let size = format.bytesPerPixel
        var cropped = [UInt8]()
        cropped.reserveCapacity(area.width * area.height * size)
        for row in area.y..<(area.y + area.height) {
            let start = (row * width + area.x) * size
            cropped += bytes[start..<(start + area.width * size)]
        }
        let scaler = BilinearScaler(source: cropped, width: area.width, height: area.height, channels: size)
        return try PixelBuffer(width: newWidth, height: newHeight, format: format, bytes: scaler.scaled(width: newWidth, height: newHeight))
    }
}

/// A rectangle of an image, in pixels from its top-left corner.
public struct PixelRegion: Sendable, Hashable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    /// Creates a region.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var description: String { "(\(x), \(y)) \(width)x\(height)" }
}
