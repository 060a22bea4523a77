/// SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed pseudorandom function made for short
/// inputs, 64 bits out. Without the key no one can tell which input gives a value, or make two
/// inputs that give the same one.
struct SipHash: Sendable {
    private let k0: UInt64
    private let k1: UInt64

    /// - Parameter key: 16 bytes, read as two little-endian words.
    init(key: some Collection<UInt8>) {
        precondition(key.count == 16, "SipHash takes a 16-byte key")
        let words = Array(key)
        k0 = words[0..<8].reversed().reduce(0) { $0 << 8 | UInt64($1) }
        k1 = words[8..<16].reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    func hash(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var state = State(k0: k0, k1: k1)
        var word: UInt64 = 0
        var count = 0
        for byte in bytes {
            word |= UInt64(byte) << (8 * UInt64(count & 7))
            count += 1
            if count & 7 == 0 {
                state.absorb(word)
                word = 0
            }
        }
        state.absorb(word | UInt64(truncatingIfNeeded: count) << 56)
        return state.finish()
    }

    private struct State {
        var v0: UInt64, v1: UInt64, v2: UInt64, v3: UInt64

        init(k0: UInt64, k1: UInt64) {
            v0 = 0x736f_6d65_7073_6575 ^ k0
            v1 = 0x646f_7261_6e64_6f6d ^ k1
            v2 = 0x6c79_6765_6e65_7261 ^ k0
            v3 = 0x7465_6462_7974_6573 ^ k1
        }

        mutating func absorb(_ word: UInt64) {
            v3 ^= word
            round()
            round()
            v0 ^= word
        }

        mutating func finish() -> UInt64 {
            v2 ^= 0xff
            for _ in 0..<4 { round() }
            return v0 ^ v1 ^ v2 ^ v3
        }

        private mutating func round() {
            v0 &+= v1
            v1 = v1.rotatedLeft(13) ^ v0
            v0 = v0.rotatedLeft(32)
            v2 &+= v3
            v3 = v3.rotatedLeft(16) ^ v2
            v0 &+= v3
            v3 = v3.rotatedLeft(21) ^ v0
            v2 &+= v1
            v1 = v1.rotatedLeft(17) ^ v2
            v2 = v2.rotatedLeft(32)
        }
    }
}

extension UInt64 {
    fileprivate func rotatedLeft(_ count: UInt64) -> UInt64 { self << count | self >> (64 - count) }
}
