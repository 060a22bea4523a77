import Foundation
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepotServer

/// Patches that know the TFLite format: a fine-tuned weight is added to its old self wherever
/// either moved (``TensorAnchors``), which the search cannot find; the patch still makes the new
/// file byte for byte, and any anchors at all (even wrong ones) do.
@Suite struct TensorAnchorsTests {
    static let base = Result { try Fixtures.bytes("delta/base") }
    static let finetuned = Result { try Fixtures.bytes("delta/finetuned") }

    static func anchors(_ old: [UInt8], _ new: [UInt8]) -> [BinaryDiff.Anchor] {
        old.withUnsafeBufferPointer { old in new.withUnsafeBufferPointer { new in TensorAnchors.between(old, new) } }
    }

    static func constants(_ bytes: [UInt8]) throws -> [TFLiteConstantTensor] {
        try bytes.withUnsafeBytes { try TFLiteVerifier().constantTensors(in: $0) }
    }

    /// The patch made with `anchors`, as ``PatchMaker`` makes it with its own.
    static func patch(_ old: [UInt8], _ new: [UInt8], anchors: [BinaryDiff.Anchor]) -> [UInt8] {
        var streams = PatchStreams()
        old.withUnsafeBufferPointer { old in
            new.withUnsafeBufferPointer { new in BinaryDiff.forEachStep(from: old, to: new, anchors: anchors) { streams.append($0) } }
        }
        return streams.finish(oldSize: old.count, newSize: new.count)
    }

    @Test func everyFineTunedWeightIsAddedToItsOldSelf() throws {
        let (old, new) = (try Self.base.get(), try Self.finetuned.get())
        let oldConstants = try Self.constants(old)
        let newConstants = try Self.constants(new)
        // Each new constant's old self: the same name, or (the renamed bias) the same first use.
        let expected = newConstants.map { tensor in
            let from = oldConstants.first { $0.name == tensor.name } ?? oldConstants.first { $0.firstUse == tensor.firstUse }
            return BinaryDiff.Anchor(new: tensor.data, old: from?.data.lowerBound ?? -1)
        }.sorted { $0.new.lowerBound < $1.new.lowerBound }
        #expect(Self.anchors(old, new) == expected)
        #expect(!expected.contains { $0.old < 0 }, "every weight has an old self")
        #expect(Set(expected.map(\.new.lowerBound)) != Set(oldConstants.map(\.data.lowerBound)), "the weights moved")
    }

    @Test func anchoredPatchIsSmallerAndMakesTheNewFile() throws {
        let (old, new) = (try Self.base.get(), try Self.finetuned.get())
        let made = try PatchMaker.patch(from: old, to: new).get()
        #expect(made == Self.patch(old, new, anchors: Self.anchors(old, new)), "the server's patch is the anchored one")
        #expect(try PatchTests.apply(made, to: old, newSize: new.count) == new)
        let searched = Self.patch(old, new, anchors: [])
        #expect(try PatchTests.apply(searched, to: old, newSize: new.count) == new)
        #expect(made.count * 10 < searched.count * 9, "anchored \(made.count) bytes, searched only \(searched.count)")
    }

    @Test func unchangedOrUnrelatedWeightsAreLeftToTheSearch() throws {
        let (old, new) = (try Self.base.get(), try Self.finetuned.get())
        #expect(Self.anchors(old, old).isEmpty, "nothing changed")
        #expect(Self.anchors(Array("daisy\nrose\n".utf8), Array("daisy\ntulip\n".utf8)).isEmpty, "not models")
        #expect(Self.anchors(old, Array(new.prefix(new.count - 1))).isEmpty, "not a valid model")
        // The float32 kernel replaced by a new one: its bytes less the old cost more than its own.
        var replaced = new
        let kernel = try #require(try Self.constants(new).first { $0.name == "dense_2/kernel" })
        var generator = SeededGenerator(seed: 11)
        for index in kernel.data {
            replaced[index] = UInt8.random(in: 0...255, using: &generator) & 0x3F | old[index] & 0xC0
        }
        let anchors = Self.anchors(old, replaced)
        #expect(!anchors.contains { $0.new == kernel.data }, "an unrelated kernel is not anchored")
        #expect(anchors.count == 3, "the other three weights still are")
    }

    @Test func addingCostsLessOnlyForSmallChanges() {
        var generator = SeededGenerator(seed: 5)
        let old = (0..<4_096).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let nudged = old.enumerated().map { $0.offset % 4 == 0 ? $0.element &+ UInt8.random(in: 0...2, using: &generator) : $0.element }
        let unrelated = old.map { _ in UInt8.random(in: 0...255, using: &generator) }
        func costsLess(_ new: [UInt8], lanes: Int) -> Bool {
            new.withUnsafeBufferPointer { new in old.withUnsafeBufferPointer { TensorAnchors.addingCostsLess(new, $0, lanes: lanes) } }
        }
        #expect(costsLess(nudged, lanes: 4))
        #expect(costsLess(nudged, lanes: 1))
        #expect(!costsLess(unrelated, lanes: 4))
    }

    /// Anchors anywhere (at the ends, next to each other, over a piece's size, and invalid ones,
    /// which are ignored): the patch still makes the new file.
    @Test func anyAnchorsMakeTheNewFile() throws {
        var generator = SeededGenerator(seed: 3)
        let old = (0..<(BinaryDiff.anchorPiece + 40_000)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var new = Array(old[20_000...]) + (0..<5_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for index in stride(from: 0, to: new.count, by: 97) { new[index] &+= 1 }
        let anchorSets: [[BinaryDiff.Anchor]] = [
            [BinaryDiff.Anchor(new: 0..<(BinaryDiff.anchorPiece + 10), old: 20_000)],
            [
                BinaryDiff.Anchor(new: 0..<100, old: 0), BinaryDiff.Anchor(new: 100..<300, old: 5),
                BinaryDiff.Anchor(new: (new.count - 50)..<new.count, old: 70),
            ],
            [
                BinaryDiff.Anchor(new: 10..<20, old: -4), BinaryDiff.Anchor(new: 15..<30, old: 0),
                BinaryDiff.Anchor(new: 50..<(new.count + 1), old: 0),
                BinaryDiff.Anchor(new: 60..<70, old: old.count - 5), BinaryDiff.Anchor(new: 5..<8, old: 0),
            ],
        ]
        for anchors in anchorSets {
            let patch = Self.patch(old, new, anchors: anchors)
            #expect(try PatchTests.apply(patch, to: old, newSize: new.count) == new, "\(anchors)")
        }
    }
}
