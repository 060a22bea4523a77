import ModelDepotShared

/// DEFLATE (RFC 1951): LZ77 matches found through hash chains over a 32 KiB window, each block
/// of ``blockSize`` coded with Huffman codes made for it, with the fixed codes, or stored,
/// whichever is smallest. A block's tokens are the cheapest path through its matches
/// (``Matches/cheapestTokens(_:costs:)``), priced by the codes of a greedy parse, then by their
/// own. The device inflates it with the project's own inflater (which keeps the 32 KiB window and
/// the codes' tables, whatever the block), so neither side needs zlib.
public enum Deflater {
    static let window = 1 << 15
    static let blockSize = 1 << 15
    static let longestMatch = 258
    /// How many earlier positions with the same hash are tried for a match.
    static let chainLimit = 64

    /// The raw DEFLATE stream (no zlib or gzip wrapper) of `input`: ``DeflateStream`` given it whole.
    public static func compress(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var stream = DeflateStream()
        stream.append(input)
        return stream.finish()
    }

    /// One block of `input`: with Huffman codes made for it, the fixed codes, or stored, whichever
    /// is smallest; its matches may reach back into the blocks `matcher` has seen. Its tokens are
    /// the greedy ones, or the cheapest path priced by their codes (and once more by its own)
    /// where that costs fewer bits.
    static func writeBlock(
        _ input: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, last: Bool, matcher: inout Matcher, writer: inout BitWriter
    ) {
        var frequencies = [Int](repeating: 0, count: 256)
        for index in range { frequencies[Int(input[index])] += 1 }
        let literalBits = HuffmanCode(frequencies: frequencies, limit: 15).lengths
        let matches = matcher.matches(input, range)
        let greedy = matches.greedyTokens(input, literalBits: literalBits)
        // The cheapest path priced by the greedy tokens' codes, then by its own codes.
        var (tokens, dynamic) = (greedy, DynamicBlock(greedy))
        for _ in 0..<2 {
            let cheapest = matches.cheapestTokens(input, costs: dynamic)
            let cheapestBlock = DynamicBlock(cheapest)
            guard cheapestBlock.bits < dynamic.bits else { break }
            (tokens, dynamic) = (cheapest, cheapestBlock)
        }
        let fixedBits = 3 + tokens.reduce(7) { $0 + Token.fixedBits($1) }
        let storedBits = 3 + 7 + 32 + range.count * 8
        if dynamic.bits < min(fixedBits, storedBits) {
            dynamic.write(tokens, last: last, to: &writer)
        } else if fixedBits <= storedBits {
            writer.write(last ? 1 : 0, bits: 1)
            writer.write(1, bits: 2)
            for token in tokens { Token.writeFixed(token, to: &writer) }
            writer.writeFixedSymbol(256)
        } else {
            writer.write(last ? 1 : 0, bits: 1)
            writer.write(0, bits: 2)
            writer.alignToByte()
            writer.write(range.count, bits: 16)
            writer.write(~range.count & 0xFFFF, bits: 16)
            for i in range { writer.write(Int(input[i]), bits: 8) }
        }
    }

    /// A literal byte, or a match of `length` bytes `distance` back.
    enum Token {
        case literal(UInt8)
        case match(length: Int, distance: Int)

        /// The length code's index for each length 0...258 (258 has a code of its own).
        static let lengthIndex: [Int] = (0...258).map { length in
            length == 258 ? 28 : (DeflateCodes.lengthBase.lastIndex { $0 <= length } ?? 0)
        }

        static func distanceIndex(_ distance: Int) -> Int {
            var low = 0, high = DeflateCodes.distanceBase.count - 1
            while low < high {
                let middle = (low + high + 1) / 2
                if DeflateCodes.distanceBase[middle] <= distance { low = middle } else { high = middle - 1 }
            }
            return low
        }

        static func fixedBits(_ token: Token) -> Int {
            switch token {
            case .literal(let byte): return byte < 144 ? 8 : 9
            case .match(let length, let distance):
                let index = lengthIndex[length]
                return (index < 23 ? 7 : 8) + DeflateCodes.lengthExtra[index] + 5 + DeflateCodes.distanceExtra[distanceIndex(distance)]
            }
        }

        static func writeFixed(_ token: Token, to writer: inout BitWriter) {
            switch token {
            case .literal(let byte):
                writer.writeFixedSymbol(Int(byte))
            case .match(let length, let distance):
                let index = lengthIndex[length]
                writer.writeFixedSymbol(257 + index)
                writer.write(length - DeflateCodes.lengthBase[index], bits: DeflateCodes.lengthExtra[index])
                let code = distanceIndex(distance)
                writer.writeCode(code, bits: 5)
                writer.write(distance - DeflateCodes.distanceBase[code], bits: DeflateCodes.distanceExtra[code])
            }
        }
    }

    /// LZ77 over the window: the most recent position of each 3-byte hash, and for each position
    /// the one before it with the same hash.
    struct Matcher {
        private var head = [Int32](repeating: -1, count: 1 << 15)
        private var previous = [Int32](repeating: -1, count: Deflater.window)
        private var inserted = 0

        private static func hash(_ input: UnsafeBufferPointer<UInt8>, _ i: Int) -> Int {
            (Int(input[i]) << 10 ^ Int(input[i + 1]) << 5 ^ Int(input[i + 2])) & 0x7FFF
        }

        /// Records positions up to (not including) `end` that have three bytes to hash.
        private mutating func insert(_ input: UnsafeBufferPointer<UInt8>, upTo end: Int) {
            while inserted < end && inserted + 2 < input.count {
                let h = Self.hash(input, inserted)
                previous[inserted & (Deflater.window - 1)] = head[h]
                head[h] = Int32(inserted)
                inserted += 1
            }
        }

        /// The longest match at each position of `range` (reaching back into earlier blocks),
        /// for ``Matches/greedyTokens(_:literalBits:)`` and ``Matches/cheapestTokens(_:costs:)``.
        /// Inside a match longer than ``Matches/followed`` bytes, the next position's match is the
        /// same one, a byte shorter, without a search: long repeats cost no search per byte.
        mutating func matches(_ input: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Matches {
            var matches = Matches(range: range)
            var (followedLength, followedDistance) = (0, 0)
            for i in range {
                insert(input, upTo: i)
                var bestLength = 0, bestDistance = 0
                if followedLength > Matches.followed {
                    (bestLength, bestDistance) = (followedLength - 1, followedDistance)
                } else if i + 2 < range.upperBound, let base = input.baseAddress {
                    var candidate = Int(head[Self.hash(input, i)])
                    var tried = 0
                    let limit = min(Deflater.longestMatch, range.upperBound - i)
                    while candidate >= 0, i - candidate <= Deflater.window, tried < Deflater.chainLimit {
                        // A candidate that differs where the best match so far ends is no longer.
                        if input[candidate + bestLength] == input[i + bestLength] {
                            let length = BinaryDiff.commonPrefix(base + candidate, limit, base + i, limit)
                            if length > bestLength {
                                bestLength = length
                                bestDistance = i - candidate
                                if length == limit { break }
                            }
                        }
                        let next = Int(previous[candidate & (Deflater.window - 1)])
                        guard next < candidate else { break }
                        candidate = next
                        tried += 1
                    }
                }
                if bestLength >= 3 { matches.set(i, length: bestLength, distance: bestDistance) }
                (followedLength, followedDistance) = (bestLength, bestDistance)
            }
            insert(input, upTo: range.upperBound)
            return matches
        }
    }

    /// Bits in DEFLATE's order: values from their least significant bit, Huffman codes from
    /// their most significant.
    struct BitWriter {
        private(set) var bytes: [UInt8] = []
        private var buffer: UInt64 = 0
        private var count = 0

        mutating func write(_ value: Int, bits: Int) {
            guard bits > 0 else { return }
            buffer |= UInt64(value & ((1 << bits) - 1)) << UInt64(count)
            count += bits
            while count >= 8 {
                bytes.append(UInt8(truncatingIfNeeded: buffer))
                buffer >>= 8
                count -= 8
            }
        }

        /// A Huffman code of `bits` bits, most significant first.
        mutating func writeCode(_ code: Int, bits: Int) {
            var reversed = 0
            for bit in 0..<bits where code & (1 << bit) != 0 { reversed |= 1 << (bits - 1 - bit) }
            write(reversed, bits: bits)
        }

        /// A literal/length symbol with the fixed code.
        mutating func writeFixedSymbol(_ symbol: Int) {
            switch symbol {
            case 0...143: writeCode(0x30 + symbol, bits: 8)
            case 144...255: writeCode(0x190 + symbol - 144, bits: 9)
            case 256...279: writeCode(symbol - 256, bits: 7)
            default: writeCode(0xC0 + symbol - 280, bits: 8)
            }
        }

        mutating func alignToByte() {
            if count > 0 { write(0, bits: 8 - count) }
        }
    }
}
