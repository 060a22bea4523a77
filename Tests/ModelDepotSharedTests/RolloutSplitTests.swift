import ModelDepotRollouts
import ModelDepotShared
import Testing

@Suite struct RolloutSplitTests {
    @Test func raisingTenToTwentyPercentMovesOnlyTheNewTenPercent() throws {
        let split = try RolloutSplit(shares: [(7, 9_000), (8, 1_000)])
        #expect(split.ranges == [.init(version: 7, start: 0, end: 9_000), .init(version: 8, start: 9_000, end: 10_000)])
        let wider = try split.resized(to: [7: 8_000, 8: 2_000])
        #expect(wider.ranges == [.init(version: 7, start: 0, end: 8_000), .init(version: 8, start: 8_000, end: 10_000)])
    }

    @Test func badSharesAndRangesAreRejectedWithTheReason() throws {
        #expect(throws: DepotError(.badRequest, "The shares add up to 90.0%, not 100%. Adjust them so they do.")) {
            try RolloutSplit(shares: [(7, 8_000), (8, 1_000)])
        }
        #expect(throws: DepotError(.badRequest, "Version 7 appears twice in the split; name each version once.")) {
            try RolloutSplit(shares: [(7, 5_000), (7, 5_000)])
        }
        #expect(throws: DepotError(.badRequest, "Ranges overlap at bucket 4000 (version 8); each bucket belongs to one version.")) {
            try RolloutSplit(ranges: [.init(version: 7, start: 0, end: 5_000), .init(version: 8, start: 4_000, end: 10_000)])
        }
        #expect(throws: DepotError(.badRequest, "Buckets 5000..<6000 belong to no version; ranges must cover 0..<10000.")) {
            try RolloutSplit(ranges: [.init(version: 7, start: 0, end: 5_000), .init(version: 8, start: 6_000, end: 10_000)])
        }
        let split = try RolloutSplit(shares: [(7, 10_000)])
        let negative = #expect(throws: DepotError.self) { try split.resized(to: [7: -100, 8: 10_100]) }
        #expect(negative?.code == .badRequest)
        // Shares whose sum overflows an Int: refused one by one, before they are added up.
        #expect(throws: DepotError(.badRequest, "Version 7 has a share of 100.01%; shares are 0% to 100%.")) {
            try RolloutSplit(shares: [(7, 10_001), (8, -1)])
        }
        let huge = #expect(throws: DepotError.self) { try RolloutSplit(shares: [(7, .max), (8, 1)]) }
        #expect(huge?.message.hasSuffix("shares are 0% to 100%.") == true, "\(huge?.message ?? "")")
        let hugeResize = #expect(throws: DepotError.self) { try split.resized(to: [7: .max, 8: .max]) }
        #expect(hugeResize?.code == .badRequest)
    }

    /// Random edits of random splits, checked bucket by bucket: a version whose share grows or
    /// stays keeps every device it had; devices only move from a shrinking version to a growing
    /// one; every version ends with exactly its share; 0% gets no device.
    @Test func resizingMovesOnlyWhatTheNewSharesRequire() throws {
        var random = SplitMix64(seed: 0x5eed)
        for _ in 0..<400 {
            let versions = Array(1...Int(random.next() % 5 + 1))
            let before = try RolloutSplit(shares: Self.randomShares(versions, &random).map { ($0.key, $0.value) }.sorted { $0.0 < $1.0 })
            let newShares = Self.randomShares(Array(1...6), &random)
            let after = try before.resized(to: newShares)
            let oldShares = before.shares

            #expect(after.shares.filter { $0.value > 0 } == newShares.filter { $0.value > 0 })
            for (bucket, (was, now)) in zip(Self.owners(before), Self.owners(after)).enumerated() {
                if newShares[was, default: 0] >= oldShares[was, default: 0] {
                    #expect(now == was, "bucket \(bucket) left version \(was) whose share did not shrink")
                }
                if now != was {
                    #expect(newShares[now, default: 0] > oldShares[now, default: 0], "bucket \(bucket) moved to \(now), which did not grow")
                }
            }
        }
    }

    /// The version of every bucket, in bucket order.
    static func owners(_ split: RolloutSplit) -> [Int] {
        split.ranges.flatMap { Array(repeating: $0.version, count: $0.end - $0.start) }
    }

    static func randomShares(_ versions: [Int], _ random: inout SplitMix64) -> [Int: Int] {
        var cuts = versions.dropFirst().map { _ in Int(random.next() % UInt64(RolloutBucket.count + 1)) }.sorted()
        if random.next() % 4 == 0, !cuts.isEmpty { cuts[0] = 0 }
        let bounds = [0] + cuts + [RolloutBucket.count]
        return Dictionary(uniqueKeysWithValues: versions.enumerated().map { ($1, bounds[$0 + 1] - bounds[$0]) })
    }
}

/// A small seeded generator, so a failing case can be replayed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
