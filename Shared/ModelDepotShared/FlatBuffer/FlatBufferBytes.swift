/// Little-endian reads from a byte buffer that never read outside it.
///
/// A read that would leave the buffer yields zero; the verifier checks every position a
/// reader uses before any reader runs, so in a verified buffer that never happens.
struct FlatBufferBytes: @unchecked Sendable {
    // @unchecked: the pointer is only read, and its owner (a `MappedFile`, `Data` or the
    // caller's buffer) outlives every use by contract of `TFLiteVerifier.verify`.
    let raw: UnsafeRawBufferPointer

    var count: Int { raw.count }

    func load<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        guard offset >= 0, offset <= raw.count - MemoryLayout<T>.size else { return 0 }
        return T(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    func float32(at offset: Int) -> Float {
        Float(bitPattern: load(UInt32.self, at: offset))
    }

    /// The offset stored at `position`, resolved to an absolute position.
    func target(ofOffsetAt position: Int) -> Int {
        position + Int(load(UInt32.self, at: position))
    }

    /// The UTF-8 string whose length prefix is at `position`.
    func string(at position: Int) -> String {
        let length = Int(load(UInt32.self, at: position))
        guard position >= 0, length <= raw.count - position - 4 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(rebasing: raw[(position + 4)..<(position + 4 + length)]), as: UTF8.self)
    }
}
