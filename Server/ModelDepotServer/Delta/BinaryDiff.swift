import Foundation

/// A bsdiff-style difference between two files (Percival, "Naive differences of executable
/// code", 2003): the new file as a sequence of steps, each adding bytes of the old file to a
/// stretch of the new one (so a stretch that moved and changed a little becomes mostly zeros,
/// which compress well) and then inserting bytes the old file does not have. Matches are found
/// by binary search in the old file's ``SuffixArray``. A ``Patch`` carries the steps, and
/// applying it (``Patch/apply(_:to:newSize:output:temporaryDirectory:)``) replays them.
enum BinaryDiff {
    /// One step: `added.count` bytes of the new file made by adding `added` to the old file's bytes
    /// from the current old offset, then `inserted` taken as they are, then the old offset moved
    /// by `seek` (after the added stretch).
    struct Step: Sendable, Hashable {
        var added: [UInt8]
        var inserted: [UInt8]
        var seek: Int
    }

    /// A stretch of the new file made by adding bytes to the same number of the old file's from
    /// `old` (``TensorAnchors``): taken as it is, not searched for.
    struct Anchor: Sendable, Hashable {
        var new: Range<Int>
        var old: Int
    }

    /// The most bytes an anchor's step adds: a larger anchor takes several steps.
    static let anchorPiece = 1 << 20

    /// Hands each step of the difference that turns `old` into `new` to `body`, in order, keeping
    /// none: memory is the old file's suffix array and one step. The `anchors` (in order, not
    /// overlapping; any other is ignored) become steps as they are, and the search covers the
    /// stretches between them, each starting where the old file's last stretch ended. An error
    /// `body` throws ends it.
    static func forEachStep<Failure: Error>(
        from old: UnsafeBufferPointer<UInt8>, to new: UnsafeBufferPointer<UInt8>, anchors: [Anchor] = [],
        _ body: (Step) throws(Failure) -> Void
    ) throws(Failure) {
        let order = SuffixArray.of(old)
        let buckets = PrefixBuckets(old)
        // A step's seek is only known once the next step's start in the old file is. Applying
        // starts at the old file's start: a first step from elsewhere needs an empty one to seek.
        var pending: (step: Step, oldStart: Int)?
        func emit(_ step: Step, oldStart: Int) throws(Failure) {
            if pending == nil, oldStart != 0 { pending = (Step(added: [], inserted: [], seek: 0), 0) }
            if let (last, lastStart) = pending {
                var last = last
                last.seek = oldStart - (lastStart + last.added.count)
                try body(last)
            }
            pending = (step, oldStart)
        }
        var newStart = 0, oldStart = 0
        for anchor in anchors {
            guard anchor.new.lowerBound >= newStart, anchor.new.upperBound <= new.count, anchor.old >= 0,
                anchor.old <= old.count - anchor.new.count
            else { continue }
            try searchSteps(
                from: old, to: UnsafeBufferPointer(rebasing: new[newStart..<anchor.new.lowerBound]), startingAt: oldStart, order: order,
                buckets: buckets, emit)
            for start in stride(from: 0, to: anchor.new.count, by: anchorPiece) {
                let count = min(anchorPiece, anchor.new.count - start)
                let (newPiece, oldPiece) = (anchor.new.lowerBound + start, anchor.old + start)
                try emit(
                    Step(added: (0..<count).map { new[newPiece + $0] &- old[oldPiece + $0] }, inserted: [], seek: 0), oldStart: oldPiece)
            }
            (newStart, oldStart) = (anchor.new.upperBound, anchor.old + anchor.new.count)
        }
        try searchSteps(
            from: old, to: UnsafeBufferPointer(rebasing: new[newStart...]), startingAt: oldStart, order: order, buckets: buckets, emit)
        if let (last, _) = pending { try body(last) }
    }

    /// The steps that make `new` (a stretch of the new file) from `old`, found by search, the
    /// first adding from `oldStart`: each handed to `emit` with where its added bytes start.
    private static func searchSteps<Failure: Error>(
        from old: UnsafeBufferPointer<UInt8>, to new: UnsafeBufferPointer<UInt8>, startingAt oldStart: Int, order: [Int32],
        buckets: PrefixBuckets, _ emit: (Step, Int) throws(Failure) -> Void
    ) throws(Failure) {
        var scan = 0, length = 0, position = 0
        var lastScan = 0, lastPosition = oldStart, lastOffset = oldStart
        while scan < new.count {
            var oldScore = 0
            scan += length
            var scored = scan
            while scan < new.count {
                (length, position) = Self.longestMatch(of: new, from: scan, in: old, order: order, buckets: buckets)
                while scored < scan + length {
                    if scored + lastOffset < old.count && old[scored + lastOffset] == new[scored] { oldScore += 1 }
                    scored += 1
                }
                // A match no better than carrying on with the last offset (within 8 bytes) is not
                // worth a step of its own.
                if (length == oldScore && length != 0) || length > oldScore + 8 { break }
                if scan + lastOffset < old.count && old[scan + lastOffset] == new[scan] { oldScore -= 1 }
                scan += 1
            }
            guard length != oldScore || scan == new.count else { continue }
            // Extend the last match forwards and this one backwards while more than half the
            // bytes agree; split any overlap where it agrees best.
            var forward = Self.bestExtension(count: min(scan - lastScan, old.count - lastPosition)) {
                old[lastPosition + $0] == new[lastScan + $0]
            }
            var backward =
                scan < new.count
                ? Self.bestExtension(count: min(scan - lastScan, position)) {
                    old[position - 1 - $0] == new[scan - 1 - $0]
                } : 0
            if lastScan + forward > scan - backward {
                let overlap = lastScan + forward - (scan - backward)
                var score = 0, bestScore = 0, split = 0
                for i in 0..<overlap {
                    if new[lastScan + forward - overlap + i] == old[lastPosition + forward - overlap + i] { score += 1 }
                    if new[scan - backward + i] == old[position - backward + i] { score -= 1 }
                    if score > bestScore {
                        bestScore = score
                        split = i + 1
                    }
                }
                forward += split - overlap
                backward -= split
            }
            let added = (0..<forward).map { new[lastScan + $0] &- old[lastPosition + $0] }
            let inserted = Array(new[(lastScan + forward)..<(scan - backward)])
            try emit(Step(added: added, inserted: inserted, seek: (position - backward) - (lastPosition + forward)), lastPosition)
            lastScan = scan - backward
            lastPosition = position - backward
            lastOffset = position - scan
        }
    }

    /// The longest prefix of `new[start...]` found in `old`, and where: binary search over the
    /// sorted suffixes (within those sharing its first bytes, each comparison ``compare(_:_:count:)``),
    /// then the better of the two neighbours it ends between.
    static func longestMatch(
        of new: UnsafeBufferPointer<UInt8>, from start: Int, in old: UnsafeBufferPointer<UInt8>,
        order: [Int32], buckets: PrefixBuckets
    ) -> (length: Int, position: Int) {
        guard !order.isEmpty, start < new.count, let oldBase = old.baseAddress, let newBase = new.baseAddress else { return (0, 0) }
        let target = newBase + start
        let targetCount = new.count - start
        var low = 0, high = order.count - 1
        if let bucket = buckets.range(of: target, count: targetCount) {
            // None shares the first bytes: the best is one of the two around where they would be.
            (low, high) =
                bucket.isEmpty
                ? (max(0, bucket.lowerBound - 1), min(order.count - 1, bucket.lowerBound))
                : (bucket.lowerBound, bucket.upperBound - 1)
        }
        while high - low >= 2 {
            let middle = low + (high - low) / 2
            let suffix = Int(order[middle])
            let count = old.count - suffix
            let compared = Self.compare(oldBase + suffix, target, count: min(count, targetCount))
            if compared < 0 || (compared == 0 && count < targetCount) { low = middle } else { high = middle }
        }
        let first = commonPrefix(oldBase + Int(order[low]), old.count - Int(order[low]), target, targetCount)
        let second = commonPrefix(oldBase + Int(order[high]), old.count - Int(order[high]), target, targetCount)
        return first > second ? (first, Int(order[low])) : (second, Int(order[high]))
    }

    /// `memcmp`'s order of the first `count` bytes, the first 8 compared as one big-endian word
    /// without a call: in changed weights most comparisons of a search end there.
    static func compare(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, count: Int) -> Int32 {
        guard count >= 8 else { return memcmp(a, b, count) }
        let first = UInt64(bigEndian: UnsafeRawPointer(a).loadUnaligned(as: UInt64.self))
        let second = UInt64(bigEndian: UnsafeRawPointer(b).loadUnaligned(as: UInt64.self))
        guard first == second else { return first < second ? -1 : 1 }
        return memcmp(a + 8, b + 8, count - 8)
    }

    static func commonPrefix(_ a: UnsafePointer<UInt8>, _ aCount: Int, _ b: UnsafePointer<UInt8>, _ bCount: Int) -> Int {
        let count = min(aCount, bCount)
        var length = 0
        while length + 8 <= count {
            let difference =
                UnsafeRawPointer(a + length).loadUnaligned(as: UInt64.self) ^ UnsafeRawPointer(b + length).loadUnaligned(as: UInt64.self)
            // The first byte that differs is the lowest in memory: in a little-endian word, the lowest bits.
            if difference != 0 { return length + UInt64(littleEndian: difference).trailingZeroBitCount / 8 }
            length += 8
        }
        while length < count, a[length] == b[length] { length += 1 }
        return length
    }

    /// How far to extend a match over `count` bytes (`agrees(i)`: whether byte i agrees) so that
    /// the agreeing bytes outnumber the others by the most.
    static func bestExtension(count: Int, agrees: (Int) -> Bool) -> Int {
        var agreeing = 0, best = 0, length = 0
        for i in 0..<max(count, 0) {
            if agrees(i) { agreeing += 1 }
            if agreeing * 2 - (i + 1) > best * 2 - length {
                best = agreeing
                length = i + 1
            }
        }
        return length
    }
}
