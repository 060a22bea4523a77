import Testing

@testable import ModelDepotServer

/// The longest match found from the prefix buckets is the longest there is.
@Suite struct PrefixBucketsTests {
    static func longestByDefinition(_ target: ArraySlice<UInt8>, in old: [UInt8]) -> Int {
        (0..<old.count).map { start in zip(old[start...], target).prefix { $0 == $1 }.count }.max() ?? 0
    }

    @Test(arguments: [1, 2, 3])
    func matchesAreAsLongAsTheLongestThereIs(width: Int) {
        var generator = SeededBytes(seed: UInt64(width))
        // Small alphabets make long shared prefixes and empty buckets; a short file makes short suffixes.
        for (size, alphabet) in [(0, 2), (1, 2), (2, 3), (3, 256), (40, 2), (300, 3), (2_000, 256), (2_000, 4)] {
            let old = (0..<size).map { _ in generator.next(below: alphabet) }
            let new = (0..<120).map { _ in generator.next(below: alphabet) } + old.prefix(50) + [9, 9]
            old.withUnsafeBufferPointer { oldBuffer in
                new.withUnsafeBufferPointer { newBuffer in
                    let order = SuffixArray.of(oldBuffer)
                    let buckets = PrefixBuckets(oldBuffer, width: width)
                    for start in 0..<new.count {
                        let found = BinaryDiff.longestMatch(of: newBuffer, from: start, in: oldBuffer, order: order, buckets: buckets)
                        let expected = Self.longestByDefinition(new[start...], in: old)
                        #expect(found.length == expected, "size \(size), alphabet \(alphabet), from \(start)")
                        if found.length > 0 {
                            #expect(
                                Array(old[found.position..<(found.position + found.length)]) == Array(new[start..<(start + found.length)]))
                        }
                    }
                }
            }
        }
    }

    struct SeededBytes {
        var state: UInt64
        init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
        mutating func next(below bound: Int) -> UInt8 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(state % UInt64(bound))
        }
    }
}
