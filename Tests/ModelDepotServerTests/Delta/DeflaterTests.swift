import Foundation
import TestSupport
import Testing

@testable import ModelDepotServer
@testable import ModelDepotShared

/// The patch streams' compressor: what it writes inflates back byte for byte, with the project's
/// inflater and with zlib, and runs of zeros shrink to almost nothing.
@Suite struct DeflaterTests {
    static func compress(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBufferPointer { Deflater.compress($0) }
    }

    static func inflate(_ compressed: [UInt8], limit: Int) throws -> [UInt8] {
        var output: [UInt8] = []
        let result = compressed.withUnsafeBytes { Inflater.inflate(FlatBufferBytes(raw: $0), limit: limit) { output += $0 } }
        _ = try result.get()
        return output
    }

    static var inputs: [(String, [UInt8])] {
        var generator = SystemRandomNumberGenerator()
        let model = try! Fixtures.bytes("float_classifier_labels")
        return [
            ("empty", []), ("one byte", [42]), ("three", [1, 2, 3]),
            ("zeros", [UInt8](repeating: 0, count: 300_000)),
            ("random", (0..<100_000).map { _ in UInt8.random(in: 0...255, using: &generator) }),
            ("text", Array(String(repeating: "the quick brown fox jumps over the lazy dog; ", count: 3_000).utf8)),
            ("a model", model),
            ("mostly zeros", (0..<200_000).map { $0 % 997 == 0 ? UInt8.random(in: 1...255, using: &generator) : 0 }),
            ("small deltas", Self.smallDeltas(count: 200_000)),
            ("two symbols", (0..<50_000).map { _ in UInt8.random(in: 0...1, using: &generator) * 200 }),
        ]
    }

    /// Bytes as a patch's added bytes are: mostly 0, else small differences either way (1, 255,
    /// 2, 254, …), each about half as likely as the one before.
    static func smallDeltas(count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in
            var size = 0
            while size < 40, Bool.random(using: &generator) { size += 1 }
            return UInt8(truncatingIfNeeded: Bool.random(using: &generator) ? size : -size)
        }
    }

    @Test func everythingInflatesBackWithTheProjectsInflater() throws {
        for (name, bytes) in Self.inputs {
            let compressed = Self.compress(bytes)
            #expect(try Self.inflate(compressed, limit: bytes.count + 1) == bytes, "\(name)")
        }
    }

    /// A limit of exactly the output's size is enough; one byte less is `tooLarge`, for literals
    /// and for matches alike, and the output held never passes what the limit allows.
    @Test func theLimitIsExact() throws {
        for (name, bytes) in Self.inputs where !bytes.isEmpty {
            let compressed = Self.compress(bytes)
            #expect(try Self.inflate(compressed, limit: bytes.count) == bytes, "\(name)")
            let short = compressed.withUnsafeBytes { Inflater.inflate(FlatBufferBytes(raw: $0), limit: bytes.count - 1) { _ in } }
            #expect(short == .failure(.tooLarge), "\(name)")
        }
    }

    /// Output past the inflater's 1 MiB flushes, with back-references reaching across each flush
    /// into the window it keeps: a 20 KB stretch repeated, a byte changed in each copy.
    @Test func backReferencesAcrossFlushesInflateBack() throws {
        var generator = SeededGenerator(seed: 9)
        let stretch = (0..<20_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var bytes: [UInt8] = []
        for copy in 0..<170 {
            var piece = stretch
            piece[copy * 97 % stretch.count] &+= 1
            bytes += piece
        }
        var pieces: [Int] = []
        let compressed = Self.compress(bytes)
        var output: [UInt8] = []
        let result = compressed.withUnsafeBytes {
            Inflater.inflate(FlatBufferBytes(raw: $0), limit: bytes.count) { piece in
                pieces.append(piece.count)
                output += piece
            }
        }
        #expect(try result.get() == bytes.count)
        let same = output == bytes
        #expect(same, "\(output.count) bytes inflated, \(bytes.count) compressed")
        #expect(compressed.count < bytes.count / 20, "the copies are back-references: \(compressed.count) bytes")
        #expect(pieces.count >= 3 && pieces.dropLast().allSatisfy { $0 == 1 << 20 }, "\(pieces)")
    }

    @Test func zlibInflatesItToo() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("deflate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        for (index, (name, bytes)) in Self.inputs.enumerated() {
            let input = scratch.appendingPathComponent("\(index).deflate")
            try Data(Self.compress(bytes)).write(to: input)
            let python = try await Program.run(
                "python3",
                [
                    "-c", "import sys, zlib; sys.stdout.buffer.write(zlib.decompress(open(sys.argv[1], 'rb').read(), -15))",
                    input.path,
                ])
            #expect(python.status == 0 && [UInt8](python.output) == bytes, "\(name): \(python.error)")
        }
    }

    @Test func runsShrinkAndRandomBytesBarelyGrow() {
        let inputs = Dictionary(uniqueKeysWithValues: Self.inputs)
        #expect(Self.compress(inputs["zeros"]!).count < 2_500, "300 kB of zeros: \(Self.compress(inputs["zeros"]!).count) bytes")
        #expect(
            Self.compress(inputs["mostly zeros"]!).count < 2_500,
            "about 80 bits per nonzero byte and its run: \(Self.compress(inputs["mostly zeros"]!).count)")
        let random = inputs["random"]!
        #expect(Self.compress(random).count <= random.count + random.count / 1_000 + 16, "stored, not expanded")
        #expect(Self.compress(inputs["text"]!).count < inputs["text"]!.count / 20)
        #expect(Self.compress([]).count == 2, "one empty final block: 10 bits")
    }

    /// Where some bytes are far more frequent than others, the block's own codes beat the fixed
    /// ones (8 or 9 bits a byte): close to the bytes' entropy.
    @Test func skewedBytesCostAboutTheirEntropy() {
        let bytes = Self.smallDeltas(count: 200_000)
        var counts = [Int](repeating: 0, count: 256)
        for byte in bytes { counts[Int(byte)] += 1 }
        let entropy = counts.filter { $0 > 0 }.reduce(0.0) {
            let p = Double($1) / Double(bytes.count)
            return $0 - p * log2(p)
        }
        let bits = Double(Self.compress(bytes).count * 8) / Double(bytes.count)
        #expect(bits < entropy * 1.1 + 0.05, "\(bits) bits a byte against an entropy of \(entropy)")
        #expect(bits < 4, "the fixed codes would take 8 or more: \(bits)")
    }

    /// Where the longest match now leaves a worse one next, the cheapest path takes a literal
    /// first: `abc` followed by `R` is a 3-byte match (`abcQ` far back) and then `R`, or `a` and one
    /// match of `bcR` (`xbcR`). Its tokens make the block's bytes and cost fewer bits than the
    /// greedy ones, priced by the greedy ones' own codes.
    @Test func theCheapestPathBeatsTheLongestMatchFirst() throws {
        var generator = SystemRandomNumberGenerator()
        func noise(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 128...255, using: &generator) } }
        let r = noise(200)
        let bytes = Array("abcQ".utf8) + noise(2_000) + Array("xbc".utf8) + r + noise(2_000) + Array("abc".utf8) + r
        var matcher = Deflater.Matcher()
        let matches = bytes.withUnsafeBufferPointer { matcher.matches($0, 0..<bytes.count) }
        var frequencies = [Int](repeating: 0, count: 256)
        for byte in bytes { frequencies[Int(byte)] += 1 }
        let literalBits = HuffmanCode(frequencies: frequencies, limit: 15).lengths
        let greedy = bytes.withUnsafeBufferPointer { matches.greedyTokens($0, literalBits: literalBits) }
        let code = Deflater.DynamicBlock(greedy)
        let cheapest = bytes.withUnsafeBufferPointer { matches.cheapestTokens($0, costs: code) }
        func replay(_ tokens: [Deflater.Token]) -> [UInt8] {
            var output: [UInt8] = []
            for token in tokens {
                switch token {
                case .literal(let byte): output.append(byte)
                case .match(let length, let distance): for _ in 0..<length { output.append(output[output.count - distance]) }
                }
            }
            return output
        }
        func priced(_ tokens: [Deflater.Token]) -> Int {
            tokens.reduce(0) { total, token in
                switch token {
                case .literal(let byte): return total + code.literals.lengths[Int(byte)]
                case .match(let length, let distance):
                    let index = Deflater.Token.lengthIndex[length], distanceCode = Deflater.Token.distanceIndex(distance)
                    return total + code.literals.lengths[257 + index] + DeflateCodes.lengthExtra[index]
                        + code.distances.lengths[distanceCode] + DeflateCodes.distanceExtra[distanceCode]
                }
            }
        }
        #expect(replay(greedy) == bytes && replay(cheapest) == bytes)
        #expect(greedy.suffix(2).map { if case .match(let length, _) = $0 { length } else { 0 } } == [3, 200], "greedy: abc, then R")
        #expect(cheapest.suffix(2).map { if case .match(let length, _) = $0 { length } else { 0 } } == [0, 202], "cheapest: a, then bcR")
        #expect(priced(cheapest) < priced(greedy))
        #expect(try Self.inflate(Self.compress(bytes), limit: bytes.count) == bytes)
    }
}
