import TestSupport
import Testing

@testable import ModelDepotServer

/// The deflater's Huffman codes: complete, within their length limit, as short in total as
/// Huffman's own where the limit does not bind, and prefix-free.
@Suite struct HuffmanCodeTests {
    /// Σ 2^-length over the coded symbols, times 2^15: a complete code makes exactly 2^15.
    static func kraft(_ code: HuffmanCode) -> Int {
        code.lengths.filter { $0 > 0 }.reduce(0) { $0 + (1 << (15 - $1)) }
    }

    /// The total cost of Huffman's code, merging the two lightest weights until one is left
    /// (each merge costs its weight once per level it adds).
    static func huffmanCost(_ frequencies: [Int]) -> Int {
        var weights = frequencies.filter { $0 > 0 }
        var cost = 0
        while weights.count > 1 {
            weights.sort(by: >)
            let merged = weights.removeLast() + weights.removeLast()
            cost += merged
            weights.append(merged)
        }
        return cost
    }

    /// Frequencies within a factor of 10 of each other: Huffman's code is at most 13 bits deep
    /// (286 symbols), so the limit does not bind.
    @Test func randomFrequenciesGetAnOptimalCompleteCode() {
        var random = SeededGenerator(seed: 31)
        for _ in 0..<500 {
            let frequencies = (0..<Int.random(in: 2...286, using: &random)).map { _ in
                Int.random(in: 0...3, using: &random) == 0 ? 0 : Int.random(in: 100...1_000, using: &random)
            }
            let code = HuffmanCode(frequencies: frequencies, limit: 15)
            #expect(Self.kraft(code) == 1 << 15, "\(frequencies)")
            #expect(code.lengths.allSatisfy { $0 <= 15 })
            #expect(zip(frequencies, code.lengths).allSatisfy { $0.0 == 0 || $0.1 > 0 }, "every used symbol has a code")
            if frequencies.count(where: { $0 > 0 }) >= 2 {
                #expect(code.cost(frequencies) == Self.huffmanCost(frequencies), "\(frequencies)")
            }
            // The bits as sent (the lowest first); sorted, a word that begins another comes just before one it begins.
            let words = zip(code.codes, code.lengths).filter { $0.1 > 0 }.map { code, length in
                (0..<length).map { String(code >> $0 & 1) }.joined()
            }.sorted()
            #expect(zip(words, words.dropFirst()).allSatisfy { !$1.hasPrefix($0) }, "prefix-free")
        }
    }

    /// Fibonacci frequencies make Huffman's code as deep as there are symbols: the limit holds.
    @Test func aLimitBindsWithoutBreakingTheCode() {
        var fibonacci = [1, 1]
        while fibonacci.count < 30 { fibonacci.append(fibonacci[fibonacci.count - 1] + fibonacci[fibonacci.count - 2]) }
        for limit in [7, 15] {
            let code = HuffmanCode(frequencies: fibonacci, limit: limit)
            #expect(code.lengths.max()! <= limit && Self.kraft(code) == 1 << 15, "\(code.lengths)")
        }
    }

    /// One symbol, or none, still makes a complete code of two symbols of 1 bit.
    @Test func fewerThanTwoSymbolsGetTwoCodes() {
        for frequencies in [[0, 0, 0], [0, 5, 0], [7, 0, 0]] {
            let code = HuffmanCode(frequencies: frequencies, limit: 15)
            #expect(code.lengths.filter { $0 > 0 } == [1, 1] && Self.kraft(code) == 1 << 15, "\(frequencies): \(code.lengths)")
            #expect(zip(frequencies, code.lengths).allSatisfy { $0.0 == 0 || $0.1 > 0 })
        }
    }
}
