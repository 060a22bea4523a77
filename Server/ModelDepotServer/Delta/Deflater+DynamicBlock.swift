import ModelDepotShared

extension Deflater {
    /// A block coded with Huffman codes made for its own tokens (RFC 1951, 3.2.7): the codes'
    /// lengths lead the block, themselves run-length coded and Huffman coded.
    struct DynamicBlock {
        /// The order in which the code-length code's lengths are sent.
        static let lengthOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
        /// Extra bits of the code-length symbols 16 (repeat the last length), 17 and 18 (zeros).
        static let runExtra = [16: 2, 17: 3, 18: 7]

        let literals: HuffmanCode
        let distances: HuffmanCode
        let lengthCode: HuffmanCode
        /// The literal/length and distance code lengths as code-length symbols, each with its extra value.
        let runs: [(symbol: Int, extra: Int)]
        let literalCount: Int
        let distanceCount: Int
        let lengthCodeCount: Int
        /// The block's size in bits, header included.
        let bits: Int

        init(_ tokens: [Token]) {
            var literalFrequencies = [Int](repeating: 0, count: 286), distanceFrequencies = [Int](repeating: 0, count: 30)
            var extraBits = 0
            for token in tokens {
                switch token {
                case .literal(let byte): literalFrequencies[Int(byte)] += 1
                case .match(let length, let distance):
                    let index = Token.lengthIndex[length]
                    literalFrequencies[257 + index] += 1
                    let code = Token.distanceIndex(distance)
                    distanceFrequencies[code] += 1
                    extraBits += DeflateCodes.lengthExtra[index] + DeflateCodes.distanceExtra[code]
                }
            }
            literalFrequencies[256] = 1
            literals = HuffmanCode(frequencies: literalFrequencies, limit: 15)
            distances = HuffmanCode(frequencies: distanceFrequencies, limit: 15)
            literalCount = max(257, (literals.lengths.lastIndex { $0 > 0 } ?? 0) + 1)
            distanceCount = max(1, (distances.lengths.lastIndex { $0 > 0 } ?? 0) + 1)
            runs = Self.runs(Array(literals.lengths[..<literalCount] + distances.lengths[..<distanceCount]))
            var runFrequencies = [Int](repeating: 0, count: 19)
            for run in runs { runFrequencies[run.symbol] += 1 }
            let lengthCode = HuffmanCode(frequencies: runFrequencies, limit: 7)
            self.lengthCode = lengthCode
            lengthCodeCount = max(4, (Self.lengthOrder.lastIndex { lengthCode.lengths[$0] > 0 } ?? 0) + 1)
            let header =
                3 + 5 + 5 + 4 + 3 * lengthCodeCount + lengthCode.cost(runFrequencies)
                + runs.reduce(0) { $0 + (Self.runExtra[$1.symbol] ?? 0) }
            bits = header + literals.cost(literalFrequencies) + distances.cost(distanceFrequencies) + extraBits
        }

        /// Code lengths as code-length symbols: a length, 16 repeating the one before 3–6 times,
        /// 17 and 18 for 3–10 and 11–138 zeros.
        static func runs(_ lengths: [Int]) -> [(symbol: Int, extra: Int)] {
            var runs: [(symbol: Int, extra: Int)] = []
            var start = 0
            while start < lengths.count {
                let length = lengths[start]
                var end = start + 1
                while end < lengths.count, lengths[end] == length { end += 1 }
                var left = end - start
                start = end
                if length == 0 {
                    while left >= 11 {
                        let run = min(left, 138)
                        runs.append((18, run - 11))
                        left -= run
                    }
                    if left >= 3 {
                        runs.append((17, left - 3))
                        left = 0
                    }
                } else {
                    runs.append((length, 0))
                    left -= 1
                    while left >= 3 {
                        let run = min(left, 6)
                        runs.append((16, run - 3))
                        left -= run
                    }
                }
                runs += repeatElement((symbol: length, extra: 0), count: left)
            }
            return runs
        }

        func write(_ tokens: [Token], last: Bool, to writer: inout BitWriter) {
            writer.write(last ? 1 : 0, bits: 1)
            writer.write(2, bits: 2)
            writer.write(literalCount - 257, bits: 5)
            writer.write(distanceCount - 1, bits: 5)
            writer.write(lengthCodeCount - 4, bits: 4)
            for symbol in Self.lengthOrder.prefix(lengthCodeCount) { writer.write(lengthCode.lengths[symbol], bits: 3) }
            for run in runs {
                writer.write(lengthCode.codes[run.symbol], bits: lengthCode.lengths[run.symbol])
                writer.write(run.extra, bits: Self.runExtra[run.symbol] ?? 0)
            }
            for token in tokens {
                switch token {
                case .literal(let byte):
                    writer.write(literals.codes[Int(byte)], bits: literals.lengths[Int(byte)])
                case .match(let length, let distance):
                    let index = Token.lengthIndex[length]
                    writer.write(literals.codes[257 + index], bits: literals.lengths[257 + index])
                    writer.write(length - DeflateCodes.lengthBase[index], bits: DeflateCodes.lengthExtra[index])
                    let code = Token.distanceIndex(distance)
                    writer.write(distances.codes[code], bits: distances.lengths[code])
                    writer.write(distance - DeflateCodes.distanceBase[code], bits: DeflateCodes.distanceExtra[code])
                }
            }
            writer.write(literals.codes[256], bits: literals.lengths[256])
        }
    }
}
