/// Decompresses a zlib stream (RFC 1950: a header, DEFLATE data, an Adler-32), as PNG image
/// data is stored, in pure Swift.
///
/// ```swift
/// let pixels = try ZlibStream.decompress(idat, limit: width * height * 4 + height)
/// ```
public enum ZlibStream {
    /// Decompresses a whole stream and checks its Adler-32.
    /// - Parameters:
    ///   - data: The stream.
    ///   - limit: The most bytes to produce.
    /// - Returns: The decompressed bytes.
    /// - Throws: ``DepotError`` (`invalid_compressed_data`) naming what is wrong with the stream.
    public static func decompress(_ data: [UInt8], limit: Int) throws(DepotError) -> [UInt8] {
        guard data.count >= 6 else { throw damaged("it has \(data.count) bytes, too few for a header and a checksum") }
        let method = data[0] & 0x0F, window = data[0] >> 4
        guard method == 8, window <= 7, (UInt16(data[0]) << 8 | UInt16(data[1])) % 31 == 0 else {
            throw damaged("its header \(data[0]) \(data[1]) is not a DEFLATE stream's")
        }
        guard data[1] & 0x20 == 0 else { throw damaged("it needs a preset dictionary") }
        var output: [UInt8] = []
        let result = data.withUnsafeBytes { raw in
            Inflater.inflate(FlatBufferBytes(raw: raw).slice(2..<(raw.count - 4)), limit: limit) { output.append(contentsOf: $0) }
        }
        switch result {
        case .success: break
        case .failure(.damaged(let what)): throw damaged(what)
        case .failure(.tooLarge): throw damaged("it holds more than the \(limit) bytes expected")
        }
        let expected = data.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard adler32(output) == expected else { throw damaged("its Adler-32 does not match its content") }
        return output
    }

    private static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        for chunk in stride(from: 0, to: bytes.count, by: 5552) {
            for byte in bytes[chunk..<min(chunk + 5552, bytes.count)] {
                a += UInt32(byte)
                b += a
            }
            a %= 65521
            b %= 65521
        }
        return b << 16 | a
    }

    private static func damaged(_ what: String) -> DepotError {
        DepotError(.invalidCompressedData, "The compressed data is damaged: \(what).")
    }
}
