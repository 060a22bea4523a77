/// The fields of one FlatBuffers table type: each field's vtable slot and what it holds.
///
/// The verifier walks a buffer with these layouts, so every byte that a reader may touch
/// is checked once, up front, whatever the table type.
struct FlatBufferTableLayout: Sendable {
    /// What a field holds; offsets and sizes follow the FlatBuffers binary format.
    enum Kind: Sendable {
        /// An inline scalar of `size` bytes.
        case scalar(size: Int)
        /// An inline `int32` that names a subgraph (control-flow operator options).
        case subgraphIndex
        /// An offset to a zero-terminated string.
        case string
        /// An offset to a table of the given table id.
        case table(Int)
        /// An offset to a vector of scalars of `elementSize` bytes.
        case scalarVector(elementSize: Int)
        /// An offset to a vector of offsets to strings.
        case stringVector
        /// An offset to a vector of offsets to tables of the given table id.
        case tableVector(Int)
        /// An offset to a table whose type is the `uint8` in slot `typeSlot`, per the given union id.
        case union(Int, typeSlot: UInt16)
    }

    /// One field of a table.
    struct Field: Sendable {
        let name: String
        let slot: UInt16
        let kind: Kind

        init(_ name: String, _ slot: UInt16, _ kind: Kind) {
            self.name = name
            self.slot = slot
            self.kind = kind
        }
    }

    let name: String
    let fields: [Field]
}

/// The member tables of one FlatBuffers union, indexed by the union's type value.
struct FlatBufferUnionLayout: Sendable {
    let name: String
    /// Table ids by type value; `nil` for `NONE` and for values the schema leaves unused.
    let members: [Int?]

    /// The table id for a type value, or `nil` when the schema does not know it.
    func member(_ type: UInt8) -> Int? {
        Int(type) < members.count ? members[Int(type)] : nil
    }
}
