/// Typed reads of one table in a verified flatbuffer.
struct FlatBufferTable: Sendable {
    let bytes: FlatBufferBytes
    let position: Int

    /// The absolute position of a field, or `nil` when the field is absent.
    func fieldPosition(_ slot: UInt16) -> Int? {
        let vtable = position - Int(Int32(truncatingIfNeeded: bytes.load(UInt32.self, at: position)))
        let entry = 4 + 2 * Int(slot)
        guard entry < Int(bytes.load(UInt16.self, at: vtable)) else { return nil }
        let offset = Int(bytes.load(UInt16.self, at: vtable + entry))
        return offset == 0 ? nil : position + offset
    }

    func scalar<T: FixedWidthInteger>(_ slot: UInt16, default value: T = 0) -> T {
        fieldPosition(slot).map { bytes.load(T.self, at: $0) } ?? value
    }

    func string(_ slot: UInt16) -> String? {
        fieldPosition(slot).map { bytes.string(at: bytes.target(ofOffsetAt: $0)) }
    }

    func table(_ slot: UInt16) -> FlatBufferTable? {
        fieldPosition(slot).map { FlatBufferTable(bytes: bytes, position: bytes.target(ofOffsetAt: $0)) }
    }

    func vector(_ slot: UInt16) -> FlatBufferVector? {
        fieldPosition(slot).map { FlatBufferVector(bytes: bytes, position: bytes.target(ofOffsetAt: $0)) }
    }

    /// The tables of a vector of tables; empty when the field is absent.
    func tables(_ slot: UInt16) -> [FlatBufferTable] {
        guard let vector = vector(slot) else { return [] }
        return (0..<vector.count).map {
            FlatBufferTable(bytes: bytes, position: bytes.target(ofOffsetAt: vector.elementPosition($0, size: 4)))
        }
    }

    /// The elements of a vector of integers, widened to `Int`; empty when the field is absent.
    func integers<T: FixedWidthInteger>(_ slot: UInt16, as type: T.Type) -> [Int] {
        guard let vector = vector(slot) else { return [] }
        let size = MemoryLayout<T>.size
        return (0..<vector.count).map { Int(bytes.load(T.self, at: vector.elementPosition($0, size: size))) }
    }

    /// The strings of a vector of strings; empty when the field is absent.
    func strings(_ slot: UInt16) -> [String] {
        guard let vector = vector(slot) else { return [] }
        return (0..<vector.count).map { bytes.string(at: bytes.target(ofOffsetAt: vector.elementPosition($0, size: 4))) }
    }

    /// The elements of a vector of `float32`; empty when the field is absent.
    func floats(_ slot: UInt16) -> [Float] {
        guard let vector = vector(slot) else { return [] }
        return (0..<vector.count).map { bytes.float32(at: vector.elementPosition($0, size: 4)) }
    }
}

/// The position and length of a vector in a verified flatbuffer.
struct FlatBufferVector: Sendable {
    let bytes: FlatBufferBytes
    let position: Int

    var count: Int { Int(bytes.load(UInt32.self, at: position)) }

    func elementPosition(_ index: Int, size: Int) -> Int { position + 4 + index * size }
}
