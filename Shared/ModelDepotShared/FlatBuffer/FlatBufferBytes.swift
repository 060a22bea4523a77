/// Little-endian reads from a byte buffer that never read outside it.
///
/// A read that would leave the buffer yields zero; the verifier checks every position a
/// reader uses before any reader runs, so in a verified buffer that never happens. The bytes
/// are contiguous (a mapped file, an array) or paged in on demand (``PagedBytes``), and may be a
/// part of a larger file (a metadata buffer inside a model), with positions relative to that part.
struct FlatBufferBytes: @unchecked Sendable {
    // @unchecked: the pointer is only read, and its owner (a `MappedFile`, `Data` or the
    // caller's buffer) outlives every use by contract of `TFLiteVerifier.verify`.
    private let raw: UnsafeRawBufferPointer?
    private let pages: PagedBytes?
    /// Where position 0 is in the underlying bytes.
    private let base: Int
    let count: Int

    init(raw: UnsafeRawBufferPointer) {
        self.raw = raw
        pages = nil
        base = 0
        count = raw.count
    }

    init(pages: PagedBytes) {
        raw = nil
        self.pages = pages
        base = 0
        count = pages.count
    }

    private init(raw: UnsafeRawBufferPointer?, pages: PagedBytes?, base: Int, count: Int) {
        self.raw = raw
        self.pages = pages
        self.base = base
        self.count = count
    }

    /// The bytes `range` (which the caller checked lies inside), with positions starting at 0.
    func slice(_ range: Range<Int>) -> FlatBufferBytes {
        FlatBufferBytes(raw: raw, pages: pages, base: base + range.lowerBound, count: range.count)
    }

    func load<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        guard offset >= 0, offset <= count - MemoryLayout<T>.size else { return 0 }
        if let raw { return T(littleEndian: raw.loadUnaligned(fromByteOffset: base + offset, as: T.self)) }
        return pages!.load(T.self, at: base + offset)
    }

    func float32(at offset: Int) -> Float {
        Float(bitPattern: load(UInt32.self, at: offset))
    }

    /// A copy of `length` bytes at `offset`; empty when they do not all lie inside.
    func bytes(at offset: Int, length: Int) -> [UInt8] {
        guard offset >= 0, length >= 0, length <= count - offset else { return [] }
        if let raw { return Array(UnsafeRawBufferPointer(rebasing: raw[(base + offset)..<(base + offset + length)])) }
        return pages!.bytes(at: base + offset, length: length)
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
            return String(
                decoding: UnsafeRawBufferPointer(rebasing: raw[(base + position + 4)..<(base + position + 4 + length)]), as: UTF8.self)
        }
        return String(decoding: pages!.bytes(at: base + position + 4, length: length), as: UTF8.self)
    }
}
