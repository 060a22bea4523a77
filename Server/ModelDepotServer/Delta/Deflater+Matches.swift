import ModelDepotShared

extension Deflater {
    /// A block's longest match at each position (``Matcher/matches(_:_:)``), and the two ways of
    /// choosing among them: greedily, or by the cheapest path through the block.
    struct Matches {
        /// A match longer than this is followed into the next position instead of searched again.
        static let followed = 32
        /// Past this length only the whole match is weighed against a literal (a long repeat's
        /// shorter matches would cost a pass each over most of their lengths).
        static let weighedWhole = 64

        let range: Range<Int>
        /// By position in the block: the match's length (0 for none under 3) and distance.
        private var lengths: [UInt16]
        private var distances: [UInt16]

        init(range: Range<Int>) {
            self.range = range
            lengths = [UInt16](repeating: 0, count: range.count)
            distances = [UInt16](repeating: 0, count: range.count)
        }

        mutating func set(_ position: Int, length: Int, distance: Int) {
            lengths[position - range.lowerBound] = UInt16(length)
            distances[position - range.lowerBound] = UInt16(distance)
        }

        /// Each match taken where it starts, when it costs fewer bits (with the fixed codes) than
        /// its bytes as literals would (`literalBits`, each byte's code length with a code made
        /// for the block's bytes): in data of few distinct values, such as small differences, a
        /// short match far back costs more than the bytes it stands for.
        func greedyTokens(_ input: UnsafeBufferPointer<UInt8>, literalBits: [Int]) -> [Token] {
            var tokens: [Token] = []
            var offset = 0
            while offset < range.count {
                let length = Int(lengths[offset]), distance = Int(distances[offset])
                let start = range.lowerBound + offset
                var literalCost = 0
                if length >= 3 {
                    for index in start..<(start + length) { literalCost += literalBits[Int(input[index])] }
                }
                if length >= 3, Token.fixedBits(.match(length: length, distance: distance)) < literalCost {
                    tokens.append(.match(length: length, distance: distance))
                    offset += length
                } else {
                    tokens.append(.literal(input[start]))
                    offset += 1
                }
            }
            return tokens
        }

        /// The tokens of least cost through the block, each literal and match priced by the code
        /// lengths `costs` gives (a symbol it has no code for costs 15 bits): at each position a
        /// literal, or its match at any length from 3 up (a shorter match at the same distance is
        /// a match too).
        func cheapestTokens(_ input: UnsafeBufferPointer<UInt8>, costs: DynamicBlock) -> [Token] {
            func bits(_ length: Int) -> Int { length == 0 ? 15 : length }
            let literalCost = (0..<256).map { bits(costs.literals.lengths[$0]) }
            let lengthCost = (0...Deflater.longestMatch).map { length in
                guard length >= 3 else { return 0 }
                let index = Token.lengthIndex[length]
                return bits(costs.literals.lengths[257 + index]) + DeflateCodes.lengthExtra[index]
            }
            let distanceCost = (0..<30).map { bits(costs.distances.lengths[$0]) + DeflateCodes.distanceExtra[$0] }
            let count = range.count
            // cheapest[offset]: the least bits to code the block's first `offset` bytes; step[offset]: the last token's length.
            var cheapest = [Int](repeating: .max, count: count + 1)
            var step = [UInt16](repeating: 0, count: count + 1)
            cheapest[0] = 0
            for offset in 0..<count {
                let here = cheapest[offset]
                let literal = here + literalCost[Int(input[range.lowerBound + offset])]
                if literal < cheapest[offset + 1] {
                    cheapest[offset + 1] = literal
                    step[offset + 1] = 1
                }
                let length = Int(lengths[offset])
                guard length >= 3 else { continue }
                let distance = here + distanceCost[Token.distanceIndex(Int(distances[offset]))]
                for candidate in (length > Self.weighedWhole ? length : 3)...length {
                    let cost = distance + lengthCost[candidate]
                    if cost < cheapest[offset + candidate] {
                        cheapest[offset + candidate] = cost
                        step[offset + candidate] = UInt16(candidate)
                    }
                }
            }
            var tokens: [Token] = []
            var offset = count
            while offset > 0 {
                let length = Int(step[offset])
                offset -= length
                tokens.append(
                    length == 1 ? .literal(input[range.lowerBound + offset]) : .match(length: length, distance: Int(distances[offset])))
            }
            return tokens.reversed()
        }
    }
}
