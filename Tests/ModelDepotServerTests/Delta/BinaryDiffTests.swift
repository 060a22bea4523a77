import Foundation
import Testing

@testable import ModelDepotServer

/// bsdiff-style differences: every pair round-trips (carried by a patch, applied as the device
/// applies it), and a small change costs little. Refusing a step outside the old file is
/// ``PatchTests``'.
@Suite struct BinaryDiffTests {
    /// Bytes the steps from `old` to `new` carry that are not zero (what compression cannot make small).
    static func cost(from old: [UInt8], to new: [UInt8]) -> Int {
        var cost = 0
        old.withUnsafeBufferPointer { old in
            new.withUnsafeBufferPointer { new in
                BinaryDiff.forEachStep(from: old, to: new) { cost += $0.inserted.count + $0.added.filter { $0 != 0 }.count }
            }
        }
        return cost
    }

    /// The new file, from `old` and the patch the server makes from `diff`'s pair.
    static func roundTrip(_ old: [UInt8], _ new: [UInt8]) throws -> [UInt8] {
        try PatchTests.apply(PatchMaker.patch(from: old, to: new).get(), to: old, newSize: new.count)
    }

    @Test func emptyTinyGrowingAndShrinkingFilesRoundTrip() throws {
        let pairs: [([UInt8], [UInt8])] = [
            ([], []), ([], [1, 2, 3]), ([1, 2, 3], []), ([7], [7]), ([7], [8]), ([1, 2], [2, 1]),
            (Array(repeating: 0, count: 500), Array(repeating: 0, count: 1_500)),
            (Array(0...255), Array((0...255).reversed())),
        ]
        for (old, new) in pairs {
            #expect(try Self.roundTrip(old, new) == new, "\(old.prefix(8)) -> \(new.prefix(8))")
        }
    }

    /// The search's compare orders bytes as `memcmp` does: below, at and above its 8-byte word;
    /// equal, one byte changed, all bytes different (where a little-endian word would disagree),
    /// and the word equal with a difference after it.
    @Test func compareOrdersAsMemcmpDoes() {
        var generator = SystemRandomNumberGenerator()
        func sign(_ value: Int32) -> Int32 { value < 0 ? -1 : value > 0 ? 1 : 0 }
        var disagreements = 0
        for round in 0..<4_000 {
            let count = Int.random(in: 0...20, using: &generator)
            let a = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var b = a
            switch round % 4 {
            case 1 where count > 0: b[Int.random(in: 0..<count, using: &generator)] &+= 1
            case 2: b = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            case 3 where count > 8: b[Int.random(in: 8..<count, using: &generator)] &-= 1
            default: break
            }
            if sign(BinaryDiff.compare(a, b, count: count)) != sign(memcmp(a, b, count)) { disagreements += 1 }
        }
        #expect(disagreements == 0)
    }

    @Test func randomEditsRoundTripAndCostAboutWhatChanged() throws {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<40 {
            let old = (0..<Int.random(in: 1...3_000, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var new = old
            let edits = Int.random(in: 0...5, using: &generator)
            for _ in 0..<edits {
                let at = Int.random(in: 0...new.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: new.insert(contentsOf: (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }, at: at)
                case 1: new.removeSubrange(at..<min(new.count, at + 16))
                default: if at < new.count { new[at] &+= 1 }
                }
            }
            let cost = Self.cost(from: old, to: new)
            #expect(try Self.roundTrip(old, new) == new, "round \(round)")
            #expect(cost <= edits * 16 + 64, "round \(round): \(edits) edits cost \(cost) bytes")
        }
    }

    @Test func aModelWithLabelsAddedCostsLittleMoreThanTheLabels() throws {
        let old = try Fixtures.bytes("float_classifier")
        let new = try Fixtures.bytes("float_classifier_labels")
        let cost = Self.cost(from: old, to: new)
        #expect(try Self.roundTrip(old, new) == new)
        let added = new.count - old.count
        #expect(cost < added + new.count / 50, "\(cost) bytes for a file that grew by \(added) of \(new.count)")
    }
}
