/// Little-endian reads from a byte buffer that never read outside it.
///
/// A read that would leave the buffer yields zero; the verifier checks every position a
/// reader uses before any reader runs, so in a verified buffer that never happens. The bytes
/// are contiguous (a mapped file, an array) or paged in on demand (``PagedBytes``).
struct FlatBufferBytes: @unchecked Sendable {
    // @unchecked: the pointer is only read, and its owner (a `MappedFile`, `Data` or the
    // caller's buffer) outlives every use by contract of `TFLiteVerifier.verify`.
    private let raw: UnsafeRawBufferPointer?
    private let pages: PagedBytes?
    let count: Int

    init(raw: UnsafeRawBufferPointer) {
        self.raw = raw
        pages = nil
        count = raw.count
    }

    init(pages: PagedBytes) {
        raw = nil
        self.pages = pages
        count = pages.count
    }

    func load<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        guard offset >= 0, offset <= count - MemoryLayout<T>.size else { return 0 }
        if let raw { return T(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: T.self)) }
        return pages!.load(T.self, at: offset)
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
        guard position >= 0, length <= count - position - 4 else { return "" }
        if let raw {
            return String(decoding: UnsafeRawBufferPointer(rebasing: raw[(position + 4)..<(position + 4 + length)]), as: UTF8.self)
        }
        return String(decoding: pages!.bytes(at: position + 4, length: length), as: UTF8.self)
    }
}
