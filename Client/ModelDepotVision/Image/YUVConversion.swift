/// YUV to RGB as libyuv computes it (the TFLite Task Library's converter): 6-bit fixed point,
/// the luma scaled through `y * 257`, and for the video-range matrices the blue coefficient
/// held at 2.0, as libyuv holds it. So the RGB a model sees from a camera frame is the one the
/// Task Library would give it, byte for byte.
struct YUVConversion: Sendable, Hashable {
    let yScale: Int32
    let yBias: Int32
    let uToBlue: Int32
    let uToGreen: Int32
    let vToGreen: Int32
    let vToRed: Int32

    /// BT.601, video range (16-235): 1.164 (Y − 16), 1.596 V, 0.391 U and 0.813 V, 2.018 U (held at 2).
    static let bt601Video = YUVConversion(yScale: 18_997, yBias: -1_160, uToBlue: 128, uToGreen: 25, vToGreen: 52, vToRed: 102)
    /// BT.601, full range (JPEG): Y, 1.402 V, 0.344 U and 0.714 V, 1.772 U.
    static let bt601Full = YUVConversion(yScale: 16_320, yBias: 32, uToBlue: 113, uToGreen: 22, vToGreen: 46, vToRed: 90)
    /// BT.709, video range: 1.164 (Y − 16), 1.793 V, 0.213 U and 0.533 V, 2.112 U (held at 2).
    static let bt709Video = YUVConversion(yScale: 18_997, yBias: -1_160, uToBlue: 128, uToGreen: 14, vToGreen: 34, vToRed: 115)
    /// BT.709, full range: Y, 1.5748 V, 0.187 U and 0.468 V, 1.8556 U.
    static let bt709Full = YUVConversion(yScale: 16_320, yBias: 32, uToBlue: 119, uToGreen: 12, vToGreen: 30, vToRed: 101)

    /// One pixel's red, green and blue.
    @inline(__always)
    func rgb(y: UInt8, u: UInt8, v: UInt8) -> (UInt8, UInt8, UInt8) {
        let luma = Int32(truncatingIfNeeded: (UInt32(y) &* 0x0101 &* UInt32(yScale)) >> 16) + yBias
        let (chromaU, chromaV) = (Int32(u) - 128, Int32(v) - 128)
        return (
            Self.clamped(luma + chromaV * vToRed), Self.clamped(luma - (chromaU * uToGreen + chromaV * vToGreen)),
            Self.clamped(luma + chromaU * uToBlue)
        )
    }

    @inline(__always)
    private static func clamped(_ value: Int32) -> UInt8 {
        UInt8(clamping: value >> 6)
    }
}
