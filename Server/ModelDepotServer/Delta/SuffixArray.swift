/// The suffix array of a byte string in linear time: SA-IS (Nong, Zhang and Chan, "Two efficient
/// algorithms for linear time suffix array construction", 2011). Sorting the old file's
/// suffixes is the first step of a bsdiff-style patch: every match against the new file is then a
/// binary search. Memory: the 4-byte array itself and a type bit per input byte; the recursion on
/// the LMS substrings (at most half as many) works inside the array, with a type bit and two 4-byte
/// bucket boundaries per character of its alphabet.
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
    private static func sort<Character: FixedWidthInteger>(
        _ text: UnsafeBufferPointer<Character>, upper: Int,
        into suffixes: UnsafeMutableBufferPointer<Int32>
    ) {
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
        let types = Types(text)
        defer { types.deallocate() }
        let buckets = Buckets(text, upper: upper)

        // Induce from the LMS suffixes in text order: their LMS substrings come out sorted.
        suffixes.update(repeating: -1)
        var ends = buckets.ends
        for i in 1..<n where types.isLMS(i) {
            let c = Int(text[i])
            ends[c] -= 1
            suffixes[Int(ends[c])] = Int32(i)
        }
        induce(text, types, buckets, suffixes)

        // Gather the LMS positions in that order at the front, then name each substring in the
        // back half (at m + position / 2: LMS positions are at least two apart), equal neighbours
        // sharing a name.
        var m = 0
        for i in 0..<n where types.isLMS(Int(suffixes[i])) {
            suffixes[m] = suffixes[i]
            m += 1
        }
        guard m > 0 else { return }
        for i in m..<n { suffixes[i] = -1 }
        var name: Int32 = 0
        var previous = -1
        for k in 0..<m {
            let position = Int(suffixes[k])
            if previous < 0 || !sameSubstring(text, types, previous, position) { name += 1 }
            previous = position
            suffixes[m + position / 2] = name - 1
        }
        // The names in text order form the reduced string, at the end of the array.
        var j = n
        for i in stride(from: n - 1, through: m, by: -1) where suffixes[i] >= 0 {
            j -= 1
            suffixes[j] = suffixes[i]
        }
        let reducedStart = n - m
        if Int(name) < m {
            sort(
                UnsafeBufferPointer(rebasing: suffixes[reducedStart..<n]), upper: Int(name) - 1,
                into: UnsafeMutableBufferPointer(rebasing: suffixes[0..<m]))
        } else {
            // Every name differs: the reduced string's suffix array is its inverse.
            for i in 0..<m { suffixes[Int(suffixes[reducedStart + i])] = Int32(i) }
        }
        // Back from ranks in the reduced string to LMS positions, which replace the reduced string.
        j = reducedStart
        for i in 1..<n where types.isLMS(i) {
            suffixes[j] = Int32(i)
            j += 1
        }
        for k in 0..<m { suffixes[k] = suffixes[reducedStart + Int(suffixes[k])] }
        for i in m..<n { suffixes[i] = -1 }
        // Seed each bucket's end with its LMS suffixes, now in order, and induce the rest.
        ends = buckets.ends
        for k in stride(from: m - 1, through: 0, by: -1) {
            let position = suffixes[k]
            suffixes[k] = -1
            let c = Int(text[Int(position)])
            ends[c] -= 1
            suffixes[Int(ends[c])] = position
        }
        induce(text, types, buckets, suffixes)
    }

    /// Whether the LMS substrings at `a` and `b` (each up to and including the next LMS
    /// position) are equal.
    private static func sameSubstring<Character: FixedWidthInteger>(
        _ text: UnsafeBufferPointer<Character>, _ types: Types,
        _ a: Int, _ b: Int
    ) -> Bool {
        let n = text.count
        var offset = 0
        while true {
            let (x, y) = (a + offset, b + offset)
            if x == n || y == n { return false }
            if text[x] != text[y] || types.isS(x) != types.isS(y) { return false }
            if offset > 0 && (types.isLMS(x) || types.isLMS(y)) { return types.isLMS(x) && types.isLMS(y) }
            offset += 1
        }
    }

    /// Each suffix's type, a bit each: S (smaller than the suffix after it) or L.
    private struct Types {
        let bits: UnsafeMutableBufferPointer<UInt64>

        init<Character: FixedWidthInteger>(_ text: UnsafeBufferPointer<Character>) {
            let n = text.count
            bits = .allocate(capacity: n / 64 + 1)
            bits.update(repeating: 0)
            var nextIsS = false
            for i in stride(from: n - 2, through: 0, by: -1) {
                let s = text[i] == text[i + 1] ? nextIsS : text[i] < text[i + 1]
                if s { bits[i >> 6] |= 1 << UInt64(i & 63) }
                nextIsS = s
            }
        }

        func isS(_ i: Int) -> Bool { bits[i >> 6] & (1 << UInt64(i & 63)) != 0 }
        /// An S-type suffix after an L-type one.
        func isLMS(_ i: Int) -> Bool { i > 0 && isS(i) && !isS(i - 1) }
        func deallocate() { bits.deallocate() }
    }

    /// Where each character's bucket starts (4 bytes a character: in the recursion the alphabet
    /// is as large as the text); a bucket ends where the next starts.
    private struct Buckets {
        let starts: [Int32]

        init<Character: FixedWidthInteger>(_ text: UnsafeBufferPointer<Character>, upper: Int) {
            var starts = [Int32](repeating: 0, count: upper + 2)
            for i in 0..<text.count { starts[Int(text[i]) + 1] += 1 }
            for c in 0...upper { starts[c + 1] += starts[c] }
            self.starts = starts
        }

        /// Each bucket's end, to fill from (the start of the next).
        var ends: [Int32] { Array(starts.dropFirst()) }
    }

    /// Induced sorting from the LMS suffixes in place: the L-type suffixes left to right from
    /// the buckets' starts, then the S-type ones right to left from their ends.
    private static func induce<Character: FixedWidthInteger>(
        _ text: UnsafeBufferPointer<Character>, _ types: Types, _ buckets: Buckets,
        _ suffixes: UnsafeMutableBufferPointer<Int32>
    ) {
        let n = text.count
        var next = Array(buckets.starts.dropLast())
        next.withUnsafeMutableBufferPointer { next in
            let last = Int(text[n - 1])
            suffixes[Int(next[last])] = Int32(n - 1)
            next[last] += 1
            for i in 0..<n {
                let v = Int(suffixes[i])
                if v >= 1 && !types.isS(v - 1) {
                    let c = Int(text[v - 1])
                    suffixes[Int(next[c])] = Int32(v - 1)
                    next[c] += 1
                }
            }
        }
        next = buckets.ends
        next.withUnsafeMutableBufferPointer { next in
            for i in stride(from: n - 1, through: 0, by: -1) {
                let v = Int(suffixes[i])
                if v >= 1 && types.isS(v - 1) {
                    let c = Int(text[v - 1])
                    next[c] -= 1
                    suffixes[Int(next[c])] = Int32(v - 1)
                }
            }
        }
    }
}
