import Foundation
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepotVision

/// PNG and PPM decoding against Python's zlib-made images and the committed fixtures, damaged
/// images refused with `invalid_image` (never a crash), and the resize against the reference
/// reimplementation of libyuv (scripts/tflite/libyuv_argb_scale.py, checked byte for byte against
/// libyuv 1857) on every path libyuv takes.
@Suite struct PixelBufferTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let images = root.appendingPathComponent("Tests/Fixtures/images")

    static func image(_ name: String) throws -> PixelBuffer {
        try PixelBuffer(contentsOfFile: images.appendingPathComponent(name).path)
    }

    @Test func pngEqualsThePPMOfTheSamePixels() throws {
        let png = try Self.image("scene_50x37.png")
        let ppm = try Self.image("scene_50x37.ppm")
        #expect(png.width == 50 && png.height == 37 && png.format == .rgb8)
        #expect(png == ppm)
        let rgba = try Self.image("scene_50x37_rgba.png")
        #expect(rgba.format == .rgba8)
        #expect(rgba.rgb() == png)
        #expect(stride(from: 3, to: rgba.bytes.count, by: 4).allSatisfy { rgba.bytes[$0] == 200 })
    }

    /// A PNG Python writes (zlib, filter type `row % 5` re-done in Python), and what it must decode to.
    static func pythonPNG(colorType: Int, depth: Int, palette: Bool = false, transparency: Bool = false) async throws -> (
        png: [UInt8], expected: [UInt8], format: PixelBuffer.Format
    ) {
        let script = """
            import struct, sys, zlib, random
            random.seed(5)
            w, h, ct, depth = 7, 5, \(colorType), \(depth)
            samples = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ct]
            pal = [random.randrange(256) for _ in range(3 * 6)]
            trns = [random.randrange(256) for _ in range(4)]
            rows, expected = [], []
            for y in range(h):
                vals = [random.randrange(6) if ct == 3 else random.randrange(256 ** (depth // 8)) for _ in range(w * samples)]
                raw = b"".join(v.to_bytes(depth // 8, "big") for v in vals)
                bpp = max(1, samples * depth // 8)
                kind = y % 5
                prev = rows[-1][1] if rows else bytes(len(raw))
                out = bytearray()
                for i, b in enumerate(raw):
                    a = raw[i - bpp] if i >= bpp else 0
                    u = prev[i]
                    c = prev[i - bpp] if i >= bpp else 0
                    if kind == 0: p = 0
                    elif kind == 1: p = a
                    elif kind == 2: p = u
                    elif kind == 3: p = (a + u) // 2
                    else:
                        e = a + u - c
                        pa, pb, pc = abs(e - a), abs(e - u), abs(e - c)
                        p = a if pa <= pb and pa <= pc else (u if pb <= pc else c)
                    out.append((b - p) % 256)
                rows.append((bytes([kind]) + bytes(out), raw))
                for x in range(w):
                    px = [v >> (depth - 8) for v in vals[x * samples:(x + 1) * samples]]
                    if ct == 0: expected += px * 3
                    elif ct == 2 or ct == 6: expected += px
                    elif ct == 4: expected += [px[0]] * 3 + [px[1]]
                    else:
                        expected += pal[px[0] * 3:px[0] * 3 + 3]
                        if \(transparency ? "True" : "False"): expected.append(trns[px[0]] if px[0] < 4 else 255)
            def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
            png = b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, ct, 0, 0, 0))
            png += chunk(b"tEXt", b"Comment\\x00ancillary chunks are skipped")
            if ct == 3: png += chunk(b"PLTE", bytes(pal))
            if \(transparency ? "True" : "False"): png += chunk(b"tRNS", bytes(trns))
            data = zlib.compress(b"".join(r[0] for r in rows), 9)
            png += chunk(b"IDAT", data[:10]) + chunk(b"IDAT", data[10:]) + chunk(b"IEND", b"")
            sys.stdout.buffer.write(struct.pack(">I", len(png)) + png + bytes(expected))
            """
        let output = try await Program.run("python3", ["-c", script])
        #expect(output.status == 0, "\(output.error)")
        let bytes = Array(output.output)
        let length = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        let alpha = colorType == 4 || colorType == 6 || transparency
        return (Array(bytes[4..<(4 + length)]), Array(bytes[(4 + length)...]), alpha ? .rgba8 : .rgb8)
    }

    @Test(arguments: [
        (0, 8, false), (0, 16, false), (2, 8, false), (2, 16, false), (3, 8, false), (3, 8, true), (4, 8, false), (4, 16, false),
        (6, 8, false), (6, 16, false),
    ])
    func everyColourTypeAndFilterDecodes(colorType: Int, depth: Int, transparency: Bool) async throws {
        let (png, expected, format) = try await Self.pythonPNG(colorType: colorType, depth: depth, transparency: transparency)
        let image = try PixelBuffer(png: png)
        #expect(image.width == 7 && image.height == 5)
        #expect(image.format == format)
        #expect(image.bytes == expected)
    }

    @Test func damagedPNGsAreRefusedNeverACrash() async throws {
        let (png, _, _) = try await Self.pythonPNG(colorType: 2, depth: 8)
        for length in 0..<png.count {
            let error = #expect(throws: DepotError.self) { try PixelBuffer(png: Array(png.prefix(length))) }
            #expect(error?.code == .invalidImage)
        }
        for position in 8..<png.count {
            var damaged = png
            damaged[position] ^= 0x10
            let error = #expect(throws: DepotError.self, "byte \(position) changed") { try PixelBuffer(png: damaged) }
            #expect(error?.code == .invalidImage, "byte \(position) changed")
        }
        var interlaced = png
        interlaced[28] = 1
        let refused = #expect(throws: DepotError.self) { try PixelBuffer(png: interlaced) }
        #expect(refused?.code == .invalidImage)
        #expect(refused?.message.contains("CRC") == true, "the changed header no longer matches its CRC: \(refused?.message ?? "")")
    }

    @Test func ppmHeadersAreReadAndDamageRefused() throws {
        let grey = try PixelBuffer(ppm: Array("P5\n# a comment\n2 1\n255\n".utf8) + [7, 9])
        #expect(grey.bytes == [7, 7, 7, 9, 9, 9])
        for bad in ["P6\n2 1\n65535\n", "P6\n2 1\n255\n\u{1}\u{2}", "P6 x 1 255 ", "P3\n1 1\n255\n1 2 3"] {
            let error = #expect(throws: DepotError.self, "\(bad)") { try PixelBuffer(ppm: Array(bad.utf8)) }
            #expect(error?.code == .invalidImage)
        }
    }

    static let sizes: [(Int, Int, Int, Int)] = [
        (50, 37, 16, 16), (300, 200, 224, 224), (37, 50, 96, 96), (16, 16, 16, 16), (32, 32, 16, 16), (64, 48, 16, 12),
        (48, 48, 16, 16), (16, 40, 16, 16), (8, 8, 16, 16), (7, 5, 32, 9), (1, 1, 3, 3), (2, 3, 1, 1), (100, 75, 50, 25),
        (224, 224, 112, 224), (640, 480, 320, 320), (13, 1, 5, 1), (1, 13, 1, 4), (9, 9, 27, 3), (20, 20, 60, 60),
    ]

    @Test func resizeEqualsTheLibyuvReferenceOnEveryPath() async throws {
        let reference = Self.root.appendingPathComponent("scripts/tflite/libyuv_argb_scale.py").path
        var random = SeededGenerator(seed: 15)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pixel-resize-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (channels, format) in [(3, PixelBuffer.Format.rgb8), (4, .rgba8)] {
            for (sw, sh, dw, dh) in Self.sizes {
                let pixels = (0..<(sw * sh * channels)).map { _ in UInt8.random(in: 0...255, using: &random) }
                let input = directory.appendingPathComponent("in")
                try Data(pixels).write(to: input)
                let output = try await Program.run(
                    "sh", ["-c", "python3 \(reference) \(sw) \(sh) \(dw) \(dh) \(channels) < \(input.path)"])
                #expect(output.status == 0, "\(output.error)")
                let ours = try PixelBuffer(width: sw, height: sh, format: format, bytes: pixels).resized(width: dw, height: dh)
                #expect(ours.bytes == Array(output.output), "\(sw)x\(sh) -> \(dw)x\(dh), \(channels) channels")
            }
        }
    }

    @Test func aRegionIsCroppedThenResizedAndMustLieInside() throws {
        let image = try Self.image("scene_300x200.png")
        let region = PixelRegion(x: 30, y: 20, width: 120, height: 90)
        var cropped: [UInt8] = []
        for row in 20..<110 { cropped += image.bytes[((row * 300 + 30) * 3)..<((row * 300 + 150) * 3)] }
        let expected = try PixelBuffer(width: 120, height: 90, format: .rgb8, bytes: cropped).resized(width: 16, height: 16)
        #expect(try image.resized(width: 16, height: 16, region: region) == expected)
        for outside in [
            PixelRegion(x: 250, y: 0, width: 51, height: 10), PixelRegion(x: -1, y: 0, width: 5, height: 5),
            PixelRegion(x: 0, y: 0, width: 0, height: 5),
        ] {
            let error = #expect(throws: DepotError.self, "\(outside)") { try image.resized(width: 16, height: 16, region: outside) }
            #expect(error?.code == .invalidImage)
        }
        let empty = #expect(throws: DepotError.self) { try image.resized(width: 0, height: 16) }
        #expect(empty?.code == .invalidImage)
    }
}
