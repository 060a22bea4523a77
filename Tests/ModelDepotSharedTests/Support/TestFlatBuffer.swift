/// Minimal reads of a flatbuffer's layout, for tests that damage one precise byte.
struct TestFlatBuffer {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func u32(_ at: Int) -> Int {
        Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
    }

    func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }

    var root: Int { u32(0) }

    func vtable(of table: Int) -> Int { table - Int(Int32(truncatingIfNeeded: u32(table))) }

    func fieldPosition(table: Int, slot: Int) -> Int? {
        let vtable = vtable(of: table)
        let entry = 4 + 2 * slot
        guard entry < u16(vtable), u16(vtable + entry) != 0 else { return nil }
        return table + u16(vtable + entry)
    }
}
