import ModelDepotShared

extension CameraFrame {
    /// How a Core Video pixel buffer's pixels are laid out, from its pixel format type (a
    /// four-character code) and its `kCVImageBufferYCbCrMatrixKey` attachment: the decisions
    /// behind `upright(_:orientation:)`, made here so they are tested on every platform.
    /// - Parameters:
    ///   - pixelFormat: `CVPixelBufferGetPixelFormatType`: `'BGRA'`, `'420f'` or `'420v'`.
    ///   - matrix: The YCbCr matrix attachment's value (`ITU_R_709_2`, `ITU_R_601_4`, …), if any.
    /// - Throws: `DepotError` (`invalid_image`) for another pixel format.
    public static func layout(pixelFormat: UInt32, matrix: String?) throws(DepotError) -> (Format, ColorSpace, ColorRange) {
        // An iPhone camera's YUV is BT.709 unless the buffer says otherwise (AVFoundation attaches the matrix).
        let space: ColorSpace = matrix.map { $0.contains("601") ? .bt601 : .bt709 } ?? .bt709
        switch pixelFormat {
        case fourCharacterCode("BGRA"): return (.bgra, .bt601, .full)
        case fourCharacterCode("RGBA"): return (.rgba, .bt601, .full)
        case fourCharacterCode("420f"): return (.nv12, space, .full)
        case fourCharacterCode("420v"): return (.nv12, space, .video)
        default:
            let text = String(decoding: (0..<4).map { UInt8(truncatingIfNeeded: pixelFormat >> (24 - 8 * $0)) }, as: UTF8.self)
            throw DepotError(
                .invalidImage,
                "Pixel format '\(text)' (\(pixelFormat)) is not one a frame is read from: ask the camera for kCVPixelFormatType_32BGRA or 420YpCbCr8BiPlanar (full or video range)."
            )
        }
    }

    /// A four-character code as Core Video numbers it.
    static func fourCharacterCode(_ text: StaticString) -> UInt32 {
        text.withUTF8Buffer { $0.reduce(0) { $0 << 8 | UInt32($1) } }
    }
}
