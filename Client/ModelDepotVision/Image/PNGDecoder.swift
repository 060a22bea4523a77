import ModelDepotShared

/// Decodes PNG images in pure Swift: every chunk's CRC checked, 8-bit grey, RGB, palette (with
/// `tRNS`), grey with alpha and RGBA, 16-bit samples taken by their high byte, all five row
/// filters; interlaced (Adam7) images are refused. Grey becomes RGB; alpha (or `tRNS`) gives RGBA.
struct PNGDecoder {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    private struct Header {
        var width = 0, height = 0, depth = 0, colorType = 0
        /// Samples per pixel.
        var samples: Int { [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][colorType] ?? 0 }
        /// Bytes per pixel in the filtered data (at least 1).
        var bytesPerPixel: Int { samples * depth / 8 }
    }

    static func decode(_ bytes: [UInt8]) throws(DepotError) -> PixelBuffer {
        guard bytes.starts(with: signature) else { throw damaged("it does not start with the PNG signature") }
        var position = signature.count
        var header: Header?
        var palette: [UInt8] = [], transparency: [UInt8] = []
        var data: [UInt8] = []
        var ended = false
        while !ended {
            guard position + 12 <= bytes.count else { throw damaged("it ends inside a chunk (before IEND)") }
            let length =
                Int(bytes[position]) << 24 | Int(bytes[position + 1]) << 16 | Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])
            guard length <= bytes.count - position - 12 else { throw damaged("a chunk of \(length) bytes runs past the end of the file") }
            let type = String(decoding: bytes[(position + 4)..<(position + 8)], as: UTF8.self)
            let body = Array(bytes[(position + 8)..<(position + 8 + length)])
            var crc = CRC32()
            crc.update(bytes[(position + 4)..<(position + 8 + length)])
            let stored = bytes[(position + 8 + length)..<(position + 12 + length)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard crc.value == stored else { throw damaged("the CRC of its \(type) chunk does not match") }
            position += 12 + length
            switch type {
            case "IHDR": header = try parseHeader(body)
            case "PLTE": palette = body
            case "tRNS": transparency = body
            case "IDAT":
                guard header != nil else { throw damaged("image data comes before the header") }
                data += body
            case "IEND": ended = true
            default:
                guard type.first?.isLowercase == true else { throw damaged("it has a critical chunk '\(type)' this decoder does not know") }
            }
        }
        guard let header else { throw damaged("it has no IHDR chunk") }
        let stride = (header.width * header.samples * header.depth + 7) / 8
        let raw: [UInt8]
        do {
            raw = try ZlibStream.decompress(data, limit: (stride + 1) * header.height)
        } catch {
            throw DepotError(.invalidImage, "The PNG image is damaged: its image data (IDAT) does not decompress. \(error.message)")
        }
        guard raw.count == (stride + 1) * header.height else {
            throw damaged("its image data holds \(raw.count) bytes; \(header.width)x\(header.height) needs \((stride + 1) * header.height)")
        }
        let rows = try unfilter(raw, stride: stride, height: header.height, bytesPerPixel: max(1, header.bytesPerPixel))
        return try pixels(rows, header: header, palette: palette, transparency: transparency)
    }

    private static func damaged(_ what: String) -> DepotError {
        DepotError(.invalidImage, "The PNG image is damaged or not supported: \(what).")
    }

    private static func parseHeader(_ body: [UInt8]) throws(DepotError) -> Header {
        guard body.count == 13 else { throw damaged("its IHDR chunk has \(body.count) bytes, not 13") }
        func word(_ offset: Int) -> Int {
            Int(body[offset]) << 24 | Int(body[offset + 1]) << 16 | Int(body[offset + 2]) << 8 | Int(body[offset + 3])
        }
        let header = Header(width: word(0), height: word(4), depth: Int(body[8]), colorType: Int(body[9]))
        guard header.width > 0, header.height > 0, header.width <= PixelBuffer.maximumPixels / header.height else {
            throw damaged("it is \(header.width)x\(header.height) pixels; at most \(PixelBuffer.maximumPixels) pixels are read")
        }
        let depths: [Int: [Int]] = [0: [8, 16], 2: [8, 16], 3: [8], 4: [8, 16], 6: [8, 16]]
        guard let allowed = depths[header.colorType], allowed.contains(header.depth) else {
            throw damaged(
                "colour type \(header.colorType) with bit depth \(header.depth) is not read (8-bit images, and 16-bit grey and colour, are)"
            )
        }
        guard body[10] == 0, body[11] == 0 else { throw damaged("its compression or filter method is unknown") }
        guard body[12] == 0 else { throw damaged("it is interlaced (Adam7); save it without interlacing") }
        return header
    }

    /// Undoes the row filters; returns the rows without their filter bytes.
    private static func unfilter(_ raw: [UInt8], stride: Int, height: Int, bytesPerPixel: Int) throws(DepotError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: stride * height)
        for row in 0..<height {
            let filter = raw[row * (stride + 1)]
            let input = row * (stride + 1) + 1, base = row * stride
            for column in 0..<stride {
                let value = Int(raw[input + column])
                let left = column >= bytesPerPixel ? Int(out[base + column - bytesPerPixel]) : 0
                let up = row > 0 ? Int(out[base - stride + column]) : 0
                let upLeft = row > 0 && column >= bytesPerPixel ? Int(out[base - stride + column - bytesPerPixel]) : 0
                let predicted: Int
                switch filter {
                case 0: predicted = 0
                case 1: predicted = left
                case 2: predicted = up
                case 3: predicted = (left + up) / 2
                case 4:
                    let estimate = left + up - upLeft
                    let (a, b, c) = (abs(estimate - left), abs(estimate - up), abs(estimate - upLeft))
                    predicted = a <= b && a <= c ? left : (b <= c ? up : upLeft)
                default: throw damaged("row \(row) has filter type \(filter); PNG defines 0 to 4")
                }
                out[base + column] = UInt8(truncatingIfNeeded: value + predicted)
            }
        }
        return out
    }

    private static func pixels(_ rows: [UInt8], header: Header, palette: [UInt8], transparency: [UInt8]) throws(DepotError) -> PixelBuffer {
        let step = header.depth / 8
        let samples = stride(from: 0, to: rows.count, by: step).map { rows[$0] }
        let count = header.width * header.height
        var out: [UInt8] = []
        switch header.colorType {
        case 0:
            out = samples.flatMap { [$0, $0, $0] }
            return try PixelBuffer(width: header.width, height: header.height, format: .rgb8, bytes: out)
        case 2:
            return try PixelBuffer(width: header.width, height: header.height, format: .rgb8, bytes: samples)
        case 3:
            guard !palette.isEmpty, palette.count % 3 == 0 else { throw damaged("a palette image has no valid PLTE chunk") }
            let entries = palette.count / 3
            let alpha = !transparency.isEmpty
            out.reserveCapacity(count * (alpha ? 4 : 3))
            for index in samples.map(Int.init) {
                guard index < entries else { throw damaged("a pixel names palette entry \(index); the palette has \(entries)") }
                out += palette[(index * 3)..<(index * 3 + 3)]
                if alpha { out.append(index < transparency.count ? transparency[index] : 255) }
            }
            return try PixelBuffer(width: header.width, height: header.height, format: alpha ? .rgba8 : .rgb8, bytes: out)
        case 4:
            out.reserveCapacity(count * 4)
            for pixel in 0..<count { out += [samples[pixel * 2], samples[pixel * 2], samples[pixel * 2], samples[pixel * 2 + 1]] }
            return try PixelBuffer(width: header.width, height: header.height, format: .rgba8, bytes: out)
        default:
            return try PixelBuffer(width: header.width, height: header.height, format: .rgba8, bytes: samples)
        }
    }
}

extension PixelBuffer {
    /// Decodes a PNG image (see `PNGDecoder`).
    /// - Throws: `DepotError` (`invalid_image`) naming what is wrong or not supported.
    public init(png bytes: [UInt8]) throws(DepotError) {
        self = try PNGDecoder.decode(bytes)
    }
}
