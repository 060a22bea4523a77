/// A canonical Huffman code (RFC 1951, 3.2.2) made for symbol frequencies: each symbol's code
/// length, at most `limit` bits, and its code. A symbol of frequency 0 gets no code, but two
/// symbols always get one, so that the code is complete (an inflater may refuse one that is not).
struct HuffmanCode {
    let lengths: [Int]
    /// Each code with its bits reversed, as ``Deflater/BitWriter/write(_:bits:)`` sends them
    /// (a Huffman code goes out from its most significant bit).
    let codes: [Int]

    init(frequencies: [Int], limit: Int) {
        var weights = frequencies
        var used = weights.count { $0 > 0 }
        for index in weights.indices where used < 2 && weights[index] == 0 {
            weights[index] = 1
            used += 1
        }
        var lengths = Self.lengths(weights)
        // Rare (a frequency about 2^limit times another's): flatter weights until the code fits.
        while lengths.contains(where: { $0 > limit }) {
            weights = weights.map { $0 == 0 ? 0 : ($0 + 1) / 2 }
            lengths = Self.lengths(weights)
        }
        self.lengths = lengths
        codes = Self.canonicalCodes(lengths)
    }

    /// The bits `frequencies` cost with this code.
    func cost(_ frequencies: [Int]) -> Int {
        zip(frequencies, lengths).reduce(0) { $0 + $1.0 * $1.1 }
    }

    /// Huffman's code lengths for the nonzero weights (two or more): the leaves sorted by weight
    /// and the nodes made from them form two queues, each in increasing weight, so that the two
    /// lightest are always at their fronts.
    private static func lengths(_ weights: [Int]) -> [Int] {
        let leaves = weights.indices.filter { weights[$0] > 0 }.sorted { (weights[$0], $0) < (weights[$1], $1) }
        var weight = leaves.map { weights[$0] }
        var parent = [Int](repeating: 0, count: 2 * leaves.count - 1)
        var nextLeaf = 0, nextNode = leaves.count
        func lightest() -> Int {
            let isLeaf = nextLeaf < leaves.count && (nextNode == weight.count || weight[nextLeaf] <= weight[nextNode])
            defer { if isLeaf { nextLeaf += 1 } else { nextNode += 1 } }
            return isLeaf ? nextLeaf : nextNode
        }
        for _ in 1..<leaves.count {
            let (first, second) = (lightest(), lightest())
            parent[first] = weight.count
            parent[second] = weight.count
            weight.append(weight[first] + weight[second])
        }
        // A node's parent comes after it; the root (the last) has depth 0.
        var depth = [Int](repeating: 0, count: weight.count)
        for node in stride(from: weight.count - 2, through: 0, by: -1) { depth[node] = depth[parent[node]] + 1 }
        var lengths = [Int](repeating: 0, count: weights.count)
        for (node, symbol) in leaves.enumerated() { lengths[symbol] = depth[node] }
        return lengths
    }

    /// The codes RFC 1951 assigns to `lengths`: consecutive within a length, in symbol order.
    private static func canonicalCodes(_ lengths: [Int]) -> [Int] {
        var count = [Int](repeating: 0, count: 16)
        for length in lengths where length > 0 { count[length] += 1 }
        var next = [Int](repeating: 0, count: 16)
        var code = 0
        for length in 1...15 {
            code = (code + count[length - 1]) << 1
            next[length] = code
        }
        return lengths.map { length in
            guard length > 0 else { return 0 }
            defer { next[length] += 1 }
            var reversed = 0
            for bit in 0..<length where next[length] & (1 << bit) != 0 { reversed |= 1 << (length - 1 - bit) }
            return reversed
        }
    }
}
