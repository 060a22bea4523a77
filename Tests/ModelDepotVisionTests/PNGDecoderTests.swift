import Foundation
import ModelDepotShared
import ModelDepotVision
import TestSupport
import Testing

/// The committed PNG fixtures decode to the pixels an independent pure-Python decoder (zlib and
/// the five filters written out) finds, and PNGs whose every CRC is right but whose content is
/// wrong or unsupported are refused with `invalid_image`, each by the check that names the fault.
@Suite struct PNGDecoderTests {
    static let images = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/images")

    /// Decodes an 8-bit RGB or RGBA PNG in Python and prints `width height channels filters\n`
    /// then the pixels.
    static let pythonDecoder = """
        import struct, sys, zlib
        data = open(sys.argv[1], "rb").read()
        assert data[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
        position, compressed = 8, b""
        while True:
            length, kind = struct.unpack(">I4s", data[position:position + 8])
            body = data[position + 8:position + 8 + length]
            position += 12 + length
            if kind == b"IHDR": w, h, depth, ct, _, _, interlace = struct.unpack(">IIBBBBB", body)
            elif kind == b"IDAT": compressed += body
            elif kind == b"IEND": break
        assert depth == 8 and interlace == 0 and ct in (2, 6)
        bpp = 3 if ct == 2 else 4
        stride = w * bpp
        raw = zlib.decompress(compressed)
        out, previous, filters = bytearray(), bytearray(stride), set()
        for y in range(h):
            kind = raw[y * (stride + 1)]
            filters.add(kind)
            line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = previous[i]
                c = previous[i - bpp] if i >= bpp else 0
                if kind == 0: p = 0
                elif kind == 1: p = a
                elif kind == 2: p = b
                elif kind == 3: p = (a + b) // 2
                else:
                    e = a + b - c
                    p = a if abs(e - a) <= abs(e - b) and abs(e - a) <= abs(e - c) else (b if abs(e - b) <= abs(e - c) else c)
                line[i] = (line[i] + p) % 256
            out += line
            previous = line
        sys.stdout.buffer.write(f"{w} {h} {bpp} {len(filters)}\\n".encode() + bytes(out))
        """

    @Test(arguments: ["scene_16x16.png", "scene_50x37.png", "scene_300x200.png", "scene_50x37_rgba.png"])
    func fixtureDecodesToThePixelsPythonFinds(name: String) async throws {
        // Given a committed fixture and Python's decoding of it
        let path = Self.images.appendingPathComponent(name).path
        let python = try await Program.run("python3", ["-c", Self.pythonDecoder, path])
        try #require(python.status == 0, "\(python.error)")
        let output = Array(python.output)
        let newline = try #require(output.firstIndex(of: UInt8(ascii: "\n")))
        let fields = String(decoding: output[..<newline], as: UTF8.self).split(separator: " ").compactMap { Int($0) }
        #expect(fields.last == 5, "the fixture's rows use all five filter types")

        // When Swift decodes it
        let image = try PixelBuffer(png: Array(try Data(contentsOf: URL(fileURLWithPath: path))))

        // Then sizes, format and every byte agree
        #expect([image.width, image.height, image.format.bytesPerPixel] == Array(fields.prefix(3)))
        #expect(image.bytes == Array(output[(newline + 1)...]))
    }

    /// Python expressions building a PNG from `chunk`, `ihdr(...)`, `idat(raw)`, `rows(...)` and
    /// `end`, with every CRC right, and a part of the message the refusal must carry.
    static let malformed: [(png: String, message: String)] = [
        ("ihdr() + idat(rows(filter=5)) + end", "filter type 5"),
        ("ihdr(width=0) + idat(b'') + end", "0x2 pixels"),
        ("ihdr(width=8193, height=8192) + idat(rows()) + end", "8193x8192 pixels"),
        ("ihdr(width=2**31 - 1, height=2**31 - 1) + idat(rows()) + end", "2147483647x2147483647"),
        ("ihdr(depth=4) + idat(rows()) + end", "bit depth 4"),
        ("ihdr(color=5) + idat(rows()) + end", "colour type 5"),
        ("ihdr(color=3, depth=16) + chunk(b'PLTE', bytes(6)) + idat(rows(bpp=2)) + end", "colour type 3 with bit depth 16"),
        ("ihdr(compression=1) + idat(rows()) + end", "compression or filter method"),
        ("ihdr(interlace=1) + idat(rows()) + end", "interlaced (Adam7)"),
        ("chunk(b'IHDR', bytes(12)) + idat(rows()) + end", "has 12 bytes, not 13"),
        ("idat(rows()) + end", "before the header"),
        ("ihdr() + idat(rows())", "before IEND"),
        ("ihdr() + end", "does not decompress"),
        ("ihdr() + chunk(b'IDAT', bytes(7)) + end", "does not decompress"),
        ("ihdr() + idat(rows()[:-1]) + end", "holds 13 bytes"),
        ("ihdr() + idat(rows() + b'x') + end", "does not decompress"),
        ("ihdr(color=3) + idat(rows(bpp=1)) + end", "no valid PLTE"),
        ("ihdr(color=3) + chunk(b'PLTE', bytes(4)) + idat(rows(bpp=1)) + end", "no valid PLTE"),
        ("ihdr(color=3) + chunk(b'PLTE', bytes(3)) + idat(bytes([0, 0, 1, 0, 0, 0])) + end", "palette entry 1"),
        ("ihdr() + chunk(b'ABCD', b'x') + idat(rows()) + end", "critical chunk 'ABCD'"),
    ]

    @Test(arguments: malformed)
    func pngWithRightCRCsButWrongContentIsRefused(png: String, message: String) async throws {
        // Given a PNG Python builds with correct chunk CRCs
        let script = """
            import struct, sys, zlib
            def chunk(kind, body): return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
            def ihdr(width=2, height=2, depth=8, color=2, compression=0, filter=0, interlace=0):
                return chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, color, compression, filter, interlace))
            def rows(filter=0, bpp=3): return b"".join(bytes([filter]) + bytes(range(2 * bpp)) for _ in range(2))
            def idat(raw): return chunk(b"IDAT", zlib.compress(raw))
            end = chunk(b"IEND", b"")
            sys.stdout.buffer.write(b"\\x89PNG\\r\\n\\x1a\\n" + \(png))
            """
        let python = try await Program.run("python3", ["-c", script])
        try #require(python.status == 0, "\(python.error)")

        // When it is decoded, then it is refused as an invalid image by the check that names the fault
        let error = #expect(throws: DepotError.self) { try PixelBuffer(png: Array(python.output)) }
        #expect(error?.code == .invalidImage)
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
    }

    @Test func everyTruncationOfAPPMIsRefused() throws {
        // Given a valid 2x2 PPM with a comment
        let ppm = Array("P6\n# two by two\n2 2\n255\n".utf8) + Array(0..<12)
        #expect(try PixelBuffer(ppm: ppm).bytes == Array(0..<12))

        // When it is cut anywhere, then it is refused as an invalid image
        for length in 0..<ppm.count {
            let error = #expect(throws: DepotError.self, "\(length) bytes") { try PixelBuffer(ppm: Array(ppm.prefix(length))) }
            #expect(error?.code == .invalidImage)
        }
    }
}
