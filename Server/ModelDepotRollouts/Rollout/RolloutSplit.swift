import ModelDepotShared

/// How a rollout rule divides the 10,000 buckets among versions: explicit half-open ranges,
/// not weights, so that editing the percentages moves as few devices as possible.
///
/// Resizing keeps the ranges of every version whose share does not change; a shrinking version
/// gives up buckets (next to a growing version where it has such a neighbour) and growing
/// versions take them (next to their own ranges first). Going from 10% to 20% moves only the new
/// 10% of devices.
///
/// ```swift
/// let split = try RolloutSplit(shares: [(7, 9_000), (8, 1_000)])
/// let wider = try split.resized(to: [7: 8_000, 8: 2_000])   // 8 gets [8000, 10000)
/// ```
public struct RolloutSplit: Sendable, Hashable, Codable {
    /// Buckets `start..<end` go to `version`.
    public struct Range: Sendable, Hashable, Codable {
        /// The version these buckets get.
        public var version: Int
        /// The first bucket.
        public var start: Int
        /// One past the last bucket.
        public var end: Int

        /// Creates a range.
        public init(version: Int, start: Int, end: Int) {
            self.version = version
            self.start = start
            self.end = end
        }

        var count: Int { end - start }
    }

    /// The ranges, sorted by `start`, covering `0..<10_000` without gaps or overlaps.
    public private(set) var ranges: [Range]

    /// Checks ranges that come from storage or from a client.
    /// - Parameter ranges: Half-open ranges in any order.
    /// - Throws: ``DepotError`` (`bad_request`) naming the overlap, gap or bad bound.
    public init(ranges: [Range]) throws(DepotError) {
        let sorted = ranges.sorted { $0.start < $1.start }
        var next = 0
        for range in sorted {
            guard range.start < range.end, range.start >= 0, range.end <= RolloutBucket.count else {
                throw DepotError(
                    .badRequest,
                    "Range \(range.start)..<\(range.end) of version \(range.version) is not within 0..<\(RolloutBucket.count) with start below end."
                )
            }
            guard range.start == next else {
                throw DepotError(
                    .badRequest,
                    range.start < next
                        ? "Ranges overlap at bucket \(range.start) (version \(range.version)); each bucket belongs to one version."
                        : "Buckets \(next)..<\(range.start) belong to no version; ranges must cover 0..<\(RolloutBucket.count).")
            }
            next = range.end
        }
        guard next == RolloutBucket.count else {
            throw DepotError(
                .badRequest, "Buckets \(next)..<\(RolloutBucket.count) belong to no version; ranges must cover 0..<\(RolloutBucket.count).")
        }
        self.ranges = Self.merged(sorted)
    }

    /// A first split: versions in the given order, each one contiguous range.
    /// - Parameter shares: Versions and their shares in basis points (100 = 1%), adding up to 10,000.
    /// - Throws: ``DepotError`` (`bad_request`) when the shares are negative, repeat a version or do not add up.
    public init(shares: [(version: Int, basisPoints: Int)]) throws(DepotError) {
        try Self.validate(shares)
        var start = 0
        var ranges: [Range] = []
        for (version, basisPoints) in shares where basisPoints > 0 {
            ranges.append(Range(version: version, start: start, end: start + basisPoints))
            start += basisPoints
        }
        self.ranges = ranges
    }

    /// Each version's share in basis points.
    public var shares: [Int: Int] {
        ranges.reduce(into: [:]) { $0[$1.version, default: 0] += $1.count }
    }

    /// The version a bucket gets.
    public func version(forBucket bucket: Int) -> Int? {
        ranges.first { $0.start <= bucket && bucket < $0.end }?.version
    }

    /// The split with new shares, moving as few buckets as possible (see the type's documentation).
    /// - Parameter newShares: Every version's new share in basis points, adding up to 10,000;
    ///   versions left out get 0.
    /// - Returns: The new split.
    /// - Throws: ``DepotError`` (`bad_request`) when the shares are negative or do not add up.
    public func resized(to newShares: [Int: Int]) throws(DepotError) -> RolloutSplit {
        try Self.validate(newShares.map { ($0.key, $0.value) })
        let old = shares
        let growing = Set(newShares.filter { $0.value > old[$0.key, default: 0] }.map(\.key))
        var owned = Dictionary(grouping: ranges, by: \.version)
        var free: [Range] = []

        for version in owned.keys.sorted() {
            var excess = old[version, default: 0] - newShares[version, default: 0]
            guard excess > 0 else { continue }
            let growingRanges = growing.flatMap { owned[$0] ?? [] }
            var kept: [Range] = []
            // Give up the ranges that touch a growing version first, from the touching side.
            let ordered = owned[version, default: []].sorted { touches($0, growingRanges) && !touches($1, growingRanges) }
            for range in ordered {
                guard excess > 0 else {
                    kept.append(range)
                    continue
                }
                let cut = min(excess, range.count)
                excess -= cut
                if growingRanges.contains(where: { $0.end == range.start }) {
                    free.append(Range(version: 0, start: range.start, end: range.start + cut))
                    if cut < range.count { kept.append(Range(version: version, start: range.start + cut, end: range.end)) }
                } else {
                    free.append(Range(version: 0, start: range.end - cut, end: range.end))
                    if cut < range.count { kept.append(Range(version: version, start: range.start, end: range.end - cut)) }
                }
            }
            owned[version] = kept
        }

        for version in growing.sorted() {
            var need = newShares[version, default: 0] - old[version, default: 0]
            while need > 0 {
                free.sort { $0.start < $1.start }
                let mine = owned[version, default: []]
                let index = free.firstIndex { piece in mine.contains { $0.start == piece.end || $0.end == piece.start } } ?? 0
                let piece = free.remove(at: index)
                let cut = min(need, piece.count)
                need -= cut
                if mine.contains(where: { $0.start == piece.end }) {
                    owned[version, default: []].append(Range(version: version, start: piece.end - cut, end: piece.end))
                    if cut < piece.count { free.append(Range(version: 0, start: piece.start, end: piece.end - cut)) }
                } else {
                    owned[version, default: []].append(Range(version: version, start: piece.start, end: piece.start + cut))
                    if cut < piece.count { free.append(Range(version: 0, start: piece.start + cut, end: piece.end)) }
                }
            }
        }
        return try RolloutSplit(ranges: owned.values.flatMap { $0 })
    }

    private func touches(_ range: Range, _ others: [Range]) -> Bool {
        others.contains { $0.end == range.start || $0.start == range.end }
    }

    private static func validate(_ shares: [(Int, Int)]) throws(DepotError) {
        var seen = Set<Int>()
        for (version, basisPoints) in shares {
            guard (0...RolloutBucket.count).contains(basisPoints) else {
                throw DepotError(.badRequest, "Version \(version) has a share of \(Double(basisPoints) / 100)%; shares are 0% to 100%.")
            }
            guard seen.insert(version).inserted else {
                throw DepotError(.badRequest, "Version \(version) appears twice in the split; name each version once.")
            }
        }
        let total = shares.reduce(0) { $0 + $1.1 }
        guard total == RolloutBucket.count else {
            throw DepotError(.badRequest, "The shares add up to \(Double(total) / 100)%, not 100%. Adjust them so they do.")
        }
    }

    private static func merged(_ sorted: [Range]) -> [Range] {
        var result: [Range] = []
        for range in sorted {
            if let last = result.last, last.version == range.version, last.end == range.start {
                result[result.count - 1].end = range.end
            } else {
                result.append(range)
            }
        }
        return result
    }
}
