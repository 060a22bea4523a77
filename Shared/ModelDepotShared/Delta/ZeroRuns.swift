/// The run-length form of a patch's added bytes, which are mostly zeros (an unchanged byte adds
/// 0): records of (zeros: a count, literals: a count, then that many bytes), counts as unsigned
/// LEB128. DEFLATE alone spends at least a match per 258 zeros; in runs, a megabyte of zeros is
/// a few bytes.
public enum ZeroRuns {
    /// The runs of `bytes`.
    public static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var encoded: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let zerosStart = index
            while index < bytes.count, bytes[index] == 0 { index += 1 }
            let literalsStart = index
            // A literal stretch ends at a run of 3 zeros or more (shorter runs cost more as a record).
            while index < bytes.count, !(index + 2 < bytes.count && bytes[index] == 0 && bytes[index + 1] == 0 && bytes[index + 2] == 0) {
                index += 1
            }
            append(literalsStart - zerosStart, to: &encoded)
            append(index - literalsStart, to: &encoded)
            encoded += bytes[literalsStart..<index]
        }
        return encoded
    }

    static func append(_ value: Int, to encoded: inout [UInt8]) {
        var value = UInt64(value)
        while value >= 0x80 {
            encoded.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        encoded.append(UInt8(value))
    }
}
