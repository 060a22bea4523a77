import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// The pure-Swift inflater against Python's zlib: stored, fixed and dynamic Huffman blocks, long
/// back-references, and damaged streams.
@Suite struct ZlibStreamTests {
    /// Compresses with Python's zlib at a level; the input is deterministic text and noise.
    static func compressed(_ data: [UInt8], level: Int) async throws -> [UInt8] {
        let directory = try TemporaryDirectory()
        let input = directory.url.appendingPathComponent("input")
        try Data(data).write(to: input)
        let script = "import sys, zlib; sys.stdout.buffer.write(zlib.compress(open(sys.argv[1], 'rb').read(), \(level)))"
        let output = try await Program.run("python3", ["-c", script, input.path])
        #expect(output.status == 0, "\(output.error)")
        return Array(output.output)
    }

    static let inputs: [(name: String, bytes: [UInt8])] = {
        var random = SeededGenerator(seed: 15)
        let noise = (0..<70_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        let text = Array(String(repeating: "daisy\nrose\ntulip\nsunflower\n", count: 5_000).utf8)
        return [
            ("empty", []), ("short", Array("a".utf8)), ("text", text), ("noise", noise),
            ("mixed", text.prefix(40_000) + noise.prefix(30_000) + text.suffix(40_000)),
        ]
    }()

    @Test(arguments: [0, 1, 6, 9])
    func decompressesWhatZlibCompressed(level: Int) async throws {
        for input in Self.inputs {
            let stream = try await Self.compressed(input.bytes, level: level)
            #expect(try ZlibStream.decompress(stream, limit: input.bytes.count) == input.bytes, "\(input.name) at level \(level)")
        }
    }

    @Test func refusesMoreThanTheLimit() async throws {
        let stream = try await Self.compressed(Array(repeating: 7, count: 10_000), level: 9)
        let error = #expect(throws: DepotError.self) { try ZlibStream.decompress(stream, limit: 9_999) }
        #expect(error?.code == .invalidCompressedData)
    }

    @Test func everyDamagedStreamIsAnErrorNotACrash() async throws {
        let original = try await Self.compressed(Self.inputs[2].bytes.prefix(3_000).map { $0 }, level: 9)
        var rejected = 0
        for position in original.indices {
            for change: (UInt8) -> UInt8 in [{ $0 ^ 0xFF }, { $0 ^ 0x01 }] {
                var bytes = original
                bytes[position] = change(bytes[position])
                do {
                    _ = try ZlibStream.decompress(bytes, limit: 1 << 20)
                } catch {
                    #expect(error.code == .invalidCompressedData)
                    rejected += 1
                }
            }
            let cut = #expect(throws: DepotError.self) { try ZlibStream.decompress(Array(original.prefix(position)), limit: 1 << 20) }
            #expect(cut?.code == .invalidCompressedData, "cut at \(position)")
        }
        // The Adler-32 catches nearly every change that still inflates.
        #expect(rejected >= original.count * 2 - 2)
    }
}
