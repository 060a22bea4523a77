/// The suffix array of a byte string in linear time: SA-IS (Nong, Zhang and Chan, "Two efficient
/// algorithms for linear time suffix array construction", 2011). Sorting the old file's
/// suffixes is the first step of a bsdiff-style patch: every match against the new file is then a
/// binary search. Memory: the 4-byte array itself, a type bit and a 4-byte rank per byte, and the
/// same again, shrinking, for each recursion on the LMS substrings (at most half as long).
enum SuffixArray {
    /// The start offsets of `bytes`' suffixes in lexicographic order (a suffix that is a prefix
    /// of another sorts first).
    static func of(_ bytes: UnsafeBufferPointer<UInt8>) -> [Int32] {
        precondition(bytes.count < Int(Int32.max), "suffix arrays hold 32-bit offsets")
        return sort(bytes, upper: 255)
    }

    /// SA-IS over `text`, whose values lie in 0...`upper`.
    private static func sort<Text: RandomAccessCollection>(_ text: Text, upper: Int) -> [Int32]
        where Text.Index == Int, Text.Element: BinaryInteger {
        let n = text.count
        let base = text.startIndex
        func value(_ i: Int) -> Int { Int(text[base + i]) }
        if n == 0 { return [] }
        if n == 1 { return [0] }
        if n == 2 { return value(0) < value(1) ? [0, 1] : [1, 0] }

        // S-type (smaller than the suffix after it) or L-type, from the end.
        var isS = [Bool](repeating: false, count: n)
        for i in stride(from: n - 2, through: 0, by: -1) {
            isS[i] = value(i) == value(i + 1) ? isS[i + 1] : value(i) < value(i + 1)
        }
        // Where each character's bucket starts (sStarts) and where its S-part starts (lStarts
        // shifted by one: the L-part comes first in a bucket).
        var sStarts = [Int](repeating: 0, count: upper + 1)
        var lStarts = [Int](repeating: 0, count: upper + 1)
        for i in 0..<n {
            if !isS[i] { sStarts[value(i)] += 1 } else if value(i) + 1 <= upper { lStarts[value(i) + 1] += 1 }
        }
        for c in 0...upper {
            sStarts[c] += lStarts[c]
            if c < upper { lStarts[c + 1] += sStarts[c] }
        }

        var suffixes = [Int32](repeating: -1, count: n)
        /// Induced sorting: the LMS suffixes in `lms` order seed the S-parts of the buckets, the
        /// L-type suffixes follow left to right, then the S-type ones right to left.
        func induce(_ lms: [Int32]) {
            for i in 0..<n { suffixes[i] = -1 }
            var next = sStarts
            for position in lms where Int(position) != n {
                let p = Int(position)
                suffixes[next[value(p)]] = position
                next[value(p)] += 1
            }
            next = lStarts
            suffixes[next[value(n - 1)]] = Int32(n - 1)
            next[value(n - 1)] += 1
            for i in 0..<n {
                let v = Int(suffixes[i])
                if v >= 1 && !isS[v - 1] {
                    suffixes[next[value(v - 1)]] = Int32(v - 1)
                    next[value(v - 1)] += 1
                }
            }
            next = lStarts
            for i in stride(from: n - 1, through: 0, by: -1) {
                let v = Int(suffixes[i])
                if v >= 1 && isS[v - 1] {
                    next[value(v - 1) + 1] -= 1
                    suffixes[next[value(v - 1) + 1]] = Int32(v - 1)
                }
            }
        }

        // LMS positions (an S-type after an L-type), and each one's rank among them.
        var lmsRank = [Int32](repeating: -1, count: n + 1)
        var lms: [Int32] = []
        for i in 1..<n where !isS[i - 1] && isS[i] {
            lmsRank[i] = Int32(lms.count)
            lms.append(Int32(i))
        }
        induce(lms)
        let m = lms.count
        guard m > 0 else { return suffixes }

        // Name the LMS substrings in their induced order; equal neighbours share a name.
        var sortedLMS: [Int32] = []
        sortedLMS.reserveCapacity(m)
        for position in suffixes where lmsRank[Int(position)] != -1 { sortedLMS.append(position) }
        var reduced = [Int32](repeating: 0, count: m)
        var name: Int32 = 0
        reduced[Int(lmsRank[Int(sortedLMS[0])])] = 0
        for i in 1..<m {
            var l = Int(sortedLMS[i - 1])
            var r = Int(sortedLMS[i])
            let endL = Int(lmsRank[l]) + 1 < m ? Int(lms[Int(lmsRank[l]) + 1]) : n
            let endR = Int(lmsRank[r]) + 1 < m ? Int(lms[Int(lmsRank[r]) + 1]) : n
            var same = endL - l == endR - r
            if same {
                while l < endL && value(l) == value(r) {
                    l += 1
                    r += 1
                }
                if l == n || value(l) != value(r) { same = false }
            }
            if !same { name += 1 }
            reduced[Int(lmsRank[Int(sortedLMS[i])])] = name
        }
        // Sort the reduced string (recursively), which orders the LMS suffixes; induce again.
        let reducedOrder = sort(reduced, upper: Int(name))
        for i in 0..<m { sortedLMS[i] = lms[Int(reducedOrder[i])] }
        induce(sortedLMS)
        return suffixes
    }
}
