/// Where the suffixes starting with each `width`-byte prefix lie in a file's suffix array, so
/// that a search for the longest match starts inside the few suffixes that share the target's
/// first bytes instead of the whole array: in a changed stretch of a model (random-looking
/// weights) each byte of the new file costs a search, and each step of a search is a cache miss.
/// Counted in one pass over the file: 2-byte prefixes (256 KiB), 3-byte ones (64 MiB) for files
/// of 64 MiB or more.
struct PrefixBuckets {
    let width: Int
    /// `starts[p]`: the first index in the suffix array of a suffix whose first `width` bytes,
    /// big-endian, are `p`, or would be; `starts[p + 1]` ends them.
    private let starts: [Int32]

    /// - Parameter width: The prefix length, 1 to 3 (tests); by default 2, or 3 from 64 MiB.
    init(_ text: UnsafeBufferPointer<UInt8>, width: Int? = nil) {
        let width = width ?? (text.count >= 64 << 20 ? 3 : 2)
        self.width = width
        let buckets = 1 << (8 * width)
        var starts = [Int32](repeating: 0, count: buckets + 1)
        guard text.count >= width else {
            self.starts = starts
            return
        }
        var counts = [Int32](repeating: 0, count: buckets)
        var prefix = 0
        for index in 0..<(width - 1) { prefix = prefix << 8 | Int(text[index]) }
        for index in (width - 1)..<text.count {
            prefix = (prefix << 8 | Int(text[index])) & (buckets - 1)
            counts[prefix] += 1
        }
        // A suffix shorter than the width sorts before every longer one it begins: it comes
        // first among those whose prefix, padded with zero bytes, is its own or above.
        var shorter = [Int32](repeating: 0, count: buckets)
        for start in (text.count - width + 1)..<text.count {
            var padded = 0
            for index in 0..<width { padded = padded << 8 | (start + index < text.count ? Int(text[start + index]) : 0) }
            shorter[padded] += 1
        }
        var total: Int32 = 0
        var short: Int32 = 0
        for bucket in 0..<buckets {
            short += shorter[bucket]
            starts[bucket] = total + short
            total += counts[bucket]
        }
        starts[buckets] = total + short
        self.starts = starts
    }

    /// The suffix array's indices of the suffixes that begin with `target`'s first `width` bytes
    /// (empty, at where they would be, when none does); `nil` for a target or a file shorter than
    /// the width.
    func range(of target: UnsafePointer<UInt8>, count: Int) -> Range<Int>? {
        guard count >= width, starts[starts.count - 1] > 0 else { return nil }
        var prefix = 0
        for index in 0..<width { prefix = prefix << 8 | Int(target[index]) }
        return Int(starts[prefix])..<Int(starts[prefix + 1])
    }
}
