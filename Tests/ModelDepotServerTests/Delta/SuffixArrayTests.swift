import Foundation
import Testing

@testable import ModelDepotServer

/// SA-IS against the definition: the suffixes, compared byte by byte, in order.
@Suite struct SuffixArrayTests {
    static func naive(_ bytes: [UInt8]) -> [Int32] {
        (0..<bytes.count).sorted { bytes[$0...].lexicographicallyPrecedes(bytes[$1...]) }.map { Int32($0) }
    }

    static func suffixArray(_ bytes: [UInt8]) -> [Int32] {
        bytes.withUnsafeBufferPointer { SuffixArray.of($0) }
    }

    @Test(arguments: [2, 4, 256])
    func randomTextsOfEveryLengthSortLikeTheDefinition(alphabet: Int) {
        var generator = SystemRandomNumberGenerator()
        for length in 0...300 {
            let bytes = (0..<length).map { _ in UInt8(Int.random(in: 0..<alphabet, using: &generator)) }
            #expect(Self.suffixArray(bytes) == Self.naive(bytes), "alphabet \(alphabet), \(bytes)")
        }
    }

    @Test func repetitionsAndRunsRecurseCorrectly() {
        let texts: [[UInt8]] = [
            Array(repeating: 0, count: 1_000), Array(repeating: 255, count: 777),
            Array([UInt8](repeating: 1, count: 3).flatMap { _ in [1, 2] + [1, 2, 1, 2, 3] }),
            (0..<2_000).map { UInt8($0 % 7 == 0 ? 9 : $0 % 3) },
            Array("mississippi".utf8), Array("abracadabra abracadabra".utf8), [3, 2, 1], [1, 2, 3], [5, 5],
        ]
        for bytes in texts {
            #expect(Self.suffixArray(bytes) == Self.naive(bytes), "\(bytes.prefix(40))")
        }
    }

    @Test func aRealModelSortsLikeTheDefinition() throws {
        let model = try Fixtures.bytes("float_classifier")
        let bytes = Array(model.prefix(6_000))
        let sorted = Self.suffixArray(model)
        #expect(sorted.count == model.count && Set(sorted).count == model.count, "a permutation of the offsets")
        for (a, b) in zip(sorted, sorted.dropFirst()) {
            #expect(model[Int(a)...].lexicographicallyPrecedes(model[Int(b)...]), "suffix \(a) before \(b)")
        }
        #expect(Self.suffixArray(bytes) == Self.naive(bytes))
    }
}
