import ModelDepotShared

extension PixelBuffer {
    /// Decodes a binary PPM (`P6`, RGB) or PGM (`P5`, grey, expanded to RGB) with a maximum value
    /// of 255; `#` comments in the header are skipped.
    /// - Throws: `DepotError` (`invalid_image`) naming what is wrong.
    public init(ppm bytes: [UInt8]) throws(DepotError) {
        var position = 2
        func number(_ what: String) throws(DepotError) -> Int {
            while position < bytes.count {
                if bytes[position] == UInt8(ascii: "#") {
                    while position < bytes.count, bytes[position] != UInt8(ascii: "\n") { position += 1 }
                } else if [9, 10, 13, 32].contains(bytes[position]) {
                    position += 1
                } else {
                    break
                }
            }
            var value = 0, digits = 0
            while position < bytes.count, (48...57).contains(bytes[position]), digits < 9 {
                value = value * 10 + Int(bytes[position] - 48)
                position += 1
                digits += 1
            }
            guard digits > 0 else { throw DepotError(.invalidImage, "The PPM header's \(what) is missing or not a number.") }
            return value
        }
        guard bytes.count > 2, bytes[0] == UInt8(ascii: "P"), bytes[1] == UInt8(ascii: "6") || bytes[1] == UInt8(ascii: "5") else {
            throw DepotError(.invalidImage, "The data is not a binary PPM (P6) or PGM (P5) image.")
        }
        let grey = bytes[1] == UInt8(ascii: "5")
        let width = try number("width"), height = try number("height"), maximum = try number("maximum value")
        guard maximum == 255 else {
            throw DepotError(.invalidImage, "The PPM's maximum value is \(maximum); only 8-bit images (255) are read.")
        }
        guard position < bytes.count, [9, 10, 13, 32].contains(bytes[position]) else {
            throw DepotError(.invalidImage, "The PPM header does not end with a whitespace byte before the pixels.")
        }
        position += 1
        guard width > 0, height > 0, width <= Self.maximumPixels / height else {
            throw DepotError(.invalidImage, "A PPM of \(width)x\(height) pixels is not allowed (at most \(Self.maximumPixels) pixels).")
        }
        let count = width * height * (grey ? 1 : 3)
        guard bytes.count - position >= count else {
            throw DepotError(
                .invalidImage,
                "The PPM holds \(bytes.count - position) bytes of pixels; a \(width)x\(height) image needs \(count). The file is cut.")
        }
        let pixels = Array(bytes[position..<(position + count)])
        try self.init(width: width, height: height, format: .rgb8, bytes: grey ? pixels.flatMap { [$0, $0, $0] } : pixels)
    }
}
