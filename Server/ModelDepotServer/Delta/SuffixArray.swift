/// The suffix array of a byte string in linear time: SA-IS (Nong, Zhang and Chan, "Two efficient
/// algorithms for linear time suffix array construction", 2011). Sorting the old file's
/// suffixes is the first step of a bsdiff-style patch: every match against the new file is then a
/// binary search. Memory: the 4-byte array itself, a type byte and a 4-byte rank per input byte,
/// and the same again, shrinking, for each recursion on the LMS substrings (at most half as long).
enum SuffixArray {
    /// The start offsets of `bytes`' suffixes in lexicographic order (a suffix that is a prefix
    /// of another sorts first).
    static func of(_ bytes: UnsafeBufferPointer<UInt8>) -> [Int32] {
        precondition(bytes.count < Int(Int32.max), "suffix arrays hold 32-bit offsets")
        return [Int32](unsafeUninitializedCapacity: bytes.count) { suffixes, count in
            sort(bytes, upper: 255, into: UnsafeMutableBufferPointer(rebasing: suffixes[0..<bytes.count]))
            count = bytes.count
        }
    }

    /// SA-IS over `text`, whose values lie in 0...`upper`, into `suffixes` (as long as `text`).
    private static func sort<Character: FixedWidthInteger>(_ text: UnsafeBufferPointer<Character>, upper: Int,
                                                            into suffixes: UnsafeMutableBufferPointer<Int32>) {
        let n = text.count
        if n == 0 { return }
        if n == 1 {
            suffixes[0] = 0
            return
        }
        if n == 2 {
            (suffixes[0], suffixes[1]) = text[0] < text[1] ? (0, 1) : (1, 0)
            return
        }
        // S-type (smaller than the suffix after it) or L-type, from the end.
        let isS = UnsafeMutableBufferPointer<Bool>.allocate(capacity: n)
        defer { isS.deallocate() }
        isS[n - 1] = false
        for i in stride(from: n - 2, through: 0, by: -1) {
            isS[i] = text[i] == text[i + 1] ? isS[i + 1] : text[i] < text[i + 1]
        }
        // Where each character's bucket starts (lStarts, shifted by one: the L-part comes first)
        // and where its S-part starts (sStarts).
        var sStarts = [Int](repeating: 0, count: upper + 1)
        var lStarts = [Int](repeating: 0, count: upper + 1)
        for i in 0..<n {
            let c = Int(text[i])
            if !isS[i] { sStarts[c] += 1 } else { lStarts[c + 1] += 1 }
        }
        for c in 0...upper {
            sStarts[c] += lStarts[c]
            if c < upper { lStarts[c + 1] += sStarts[c] }
        }
        let buckets = Buckets(sStarts: sStarts, lStarts: lStarts)

        // LMS positions (an S-type after an L-type), and each one's rank among them.
        let lmsRank = UnsafeMutableBufferPointer<Int32>.allocate(capacity: n + 1)
        defer { lmsRank.deallocate() }
        lmsRank.initialize(repeating: -1)
        var lms: [Int32] = []
        for i in 1..<n where !isS[i - 1] && isS[i] {
            lmsRank[i] = Int32(lms.count)
            lms.append(Int32(i))
        }
        induce(text, isS, buckets, lms, suffixes)
        let m = lms.count
        guard m > 0 else { return }

        // Name the LMS substrings in their induced order; equal neighbours share a name.
        var sortedLMS: [Int32] = []
        sortedLMS.reserveCapacity(m)
        for position in suffixes where lmsRank[Int(position)] != -1 { sortedLMS.append(position) }
        let reduced = UnsafeMutableBufferPointer<Int32>.allocate(capacity: m)
        defer { reduced.deallocate() }
        var name: Int32 = 0
        reduced[Int(lmsRank[Int(sortedLMS[0])])] = 0
        for i in 1..<m {
            var l = Int(sortedLMS[i - 1])
            var r = Int(sortedLMS[i])
            let endL = Int(lmsRank[l]) + 1 < m ? Int(lms[Int(lmsRank[l]) + 1]) : n
            let endR = Int(lmsRank[r]) + 1 < m ? Int(lms[Int(lmsRank[r]) + 1]) : n
            var same = endL - l == endR - r
            if same {
                while l < endL && text[l] == text[r] {
                    l += 1
                    r += 1
                }
                if l == n || text[l] != text[r] { same = false }
            }
            if !same { name += 1 }
            reduced[Int(lmsRank[Int(sortedLMS[i])])] = name
        }
        // Sort the reduced string (recursively), which orders the LMS suffixes; induce again.
        let reducedOrder = UnsafeMutableBufferPointer<Int32>.allocate(capacity: m)
        defer { reducedOrder.deallocate() }
        sort(UnsafeBufferPointer(reduced), upper: Int(name), into: reducedOrder)
        for i in 0..<m { sortedLMS[i] = lms[Int(reducedOrder[i])] }
        induce(text, isS, buckets, sortedLMS, suffixes)
    }

    /// Each character's bucket boundaries.
    private struct Buckets {
        let sStarts: [Int]
        let lStarts: [Int]
    }

    /// Induced sorting: the LMS suffixes in `lms` order seed the S-parts of the buckets, the
    /// L-type suffixes follow left to right, then the S-type ones right to left.
    private static func induce<Character: FixedWidthInteger>(_ text: UnsafeBufferPointer<Character>, _ isS: UnsafeMutableBufferPointer<Bool>,
                                                             _ buckets: Buckets, _ lms: [Int32],
                                                             _ suffixes: UnsafeMutableBufferPointer<Int32>) {
        let n = text.count
        suffixes.update(repeating: -1)
        var next = buckets.sStarts
        next.withUnsafeMutableBufferPointer { next in
            for position in lms {
                let c = Int(text[Int(position)])
                suffixes[next[c]] = position
                next[c] += 1
            }
        }
        next = buckets.lStarts
        next.withUnsafeMutableBufferPointer { next in
            let last = Int(text[n - 1])
            suffixes[next[last]] = Int32(n - 1)
            next[last] += 1
            for i in 0..<n {
                let v = Int(suffixes[i])
                if v >= 1 && !isS[v - 1] {
                    let c = Int(text[v - 1])
                    suffixes[next[c]] = Int32(v - 1)
                    next[c] += 1
                }
            }
        }
        next = buckets.lStarts
        next.withUnsafeMutableBufferPointer { next in
            for i in stride(from: n - 1, through: 0, by: -1) {
                let v = Int(suffixes[i])
                if v >= 1 && isS[v - 1] {
                    let c = Int(text[v - 1]) + 1
                    next[c] -= 1
                    suffixes[next[c]] = Int32(v - 1)
                }
            }
        }
    }
}
