/// Checks a whole flatbuffer against table layouts before anything reads it: every offset,
/// vector, string and field in bounds and aligned, vtables well formed, strings terminated,
/// nesting depth and table count bounded.
///
/// It follows the rules of FlatBuffers' own C++ `Verifier`, and also requires each field to lie
/// inside its table's inline size.
struct FlatBufferVerifier {
    /// A scalar field that names a subgraph, found while walking; range-checked afterwards.
    struct SubgraphReference {
        let value: Int32
        let path: FlatBufferPath
    }

    let bytes: FlatBufferBytes
    let tables: [FlatBufferTableLayout]
    let unions: [FlatBufferUnionLayout]
    let maximumDepth: Int
    let maximumTables: Int

    private(set) var tableCount = 0
    /// One past the last byte that any verified object occupies.
    private(set) var extent = 0
    private(set) var subgraphReferences: [SubgraphReference] = []
    private var depth = 0
    private var path: FlatBufferPath

    init(
        bytes: FlatBufferBytes, tables: [FlatBufferTableLayout], unions: [FlatBufferUnionLayout],
        maximumDepth: Int, maximumTables: Int, rootName: String
    ) {
        self.bytes = bytes
        self.tables = tables
        self.unions = unions
        self.maximumDepth = maximumDepth
        self.maximumTables = maximumTables
        self.path = FlatBufferPath(root: rootName)
    }

    /// Verifies the buffer from its root offset (bytes 0..<4) as a table of `rootTable`.
    mutating func verifyRoot(_ rootTable: Int) throws(DepotError) {
        try check(0, length: 4, alignment: 4, what: "root offset")
        try verifyTable(at: bytes.target(ofOffsetAt: 0), layout: rootTable)
    }

    private mutating func verifyTable(at position: Int, layout id: Int) throws(DepotError) {
        depth += 1
        defer { depth -= 1 }
        tableCount += 1
        guard depth <= maximumDepth else {
            throw DepotError(
                .nestingTooDeep,
                "\(path): tables nest more than \(maximumDepth) deep (cycle or hostile file); the file is not a valid TFLite model.")
        }
        guard tableCount <= maximumTables else {
            throw DepotError(
                .tooManyTables,
                "\(path): the file holds more than \(maximumTables) tables; the file is not a valid TFLite model, or raise the policy's limit."
            )
        }
        try check(position, length: 4, alignment: 4, what: "table")
        let vtable = position - Int(Int32(truncatingIfNeeded: bytes.load(UInt32.self, at: position)))
        try check(vtable, length: 4, alignment: 2, what: "vtable of the table at offset \(position)")
        let vtableSize = Int(bytes.load(UInt16.self, at: vtable))
        let tableSize = Int(bytes.load(UInt16.self, at: vtable + 2))
        guard vtableSize >= 4, vtableSize % 2 == 0, tableSize >= 4 else {
            throw DepotError(
                .invalidVTable,
                "\(path): the vtable at offset \(vtable) declares size \(vtableSize) and table size \(tableSize); the file is damaged.")
        }
        try check(vtable, length: vtableSize, alignment: 2, what: "vtable of the table at offset \(position)")
        try check(position, length: tableSize, alignment: 1, what: "table")

        let layout = tables[id]
        for field in layout.fields {
            let entry = 4 + 2 * Int(field.slot)
            guard entry < vtableSize else { continue }
            let offset = Int(bytes.load(UInt16.self, at: vtable + entry))
            guard offset != 0 else { continue }
            path.push(.field(field.name))
            defer { path.pop() }
            try verifyField(
                field, at: position + offset, fieldOffset: offset, tableSize: tableSize, table: position, vtable: (vtable, vtableSize))
        }
    }

    private mutating func verifyField(
        _ field: FlatBufferTableLayout.Field, at position: Int, fieldOffset: Int,
        tableSize: Int, table: Int, vtable: (position: Int, size: Int)
    ) throws(DepotError) {
        let inlineSize: Int
        switch field.kind {
        case .scalar(let size): inlineSize = size
        default: inlineSize = 4
        }
        guard fieldOffset >= 4, fieldOffset <= tableSize - inlineSize else {
            throw DepotError(
                .invalidVTable,
                "\(path): field at table offset \(fieldOffset) (\(inlineSize) bytes) lies outside its table of \(tableSize) bytes at offset \(table); the file is damaged."
            )
        }
        try check(position, length: inlineSize, alignment: inlineSize, what: "field")
        switch field.kind {
        case .scalar:
            return
        case .subgraphIndex:
            subgraphReferences.append(
                SubgraphReference(value: Int32(truncatingIfNeeded: bytes.load(UInt32.self, at: position)), path: path))
        case .string:
            try verifyString(at: try resolveOffset(at: position))
        case .table(let id):
            try verifyTable(at: try resolveOffset(at: position), layout: id)
        case .scalarVector(let elementSize):
            _ = try verifyVector(at: try resolveOffset(at: position), elementSize: elementSize)
        case .stringVector:
            let vector = try verifyVector(at: try resolveOffset(at: position), elementSize: 4)
            for index in 0..<vector.count {
                path.push(.index(index))
                defer { path.pop() }
                try verifyString(at: try resolveOffset(at: vector.elementPosition(index, size: 4)))
            }
        case .tableVector(let id):
            let vector = try verifyVector(at: try resolveOffset(at: position), elementSize: 4)
            for index in 0..<vector.count {
                path.push(.index(index))
                defer { path.pop() }
                try verifyTable(at: try resolveOffset(at: vector.elementPosition(index, size: 4)), layout: id)
            }
        case .union(let unionID, let typeSlot):
            let typeEntry = 4 + 2 * Int(typeSlot)
            let typeOffset = typeEntry < vtable.size ? Int(bytes.load(UInt16.self, at: vtable.position + typeEntry)) : 0
            let type = typeOffset == 0 ? 0 : bytes.load(UInt8.self, at: table + typeOffset)
            let target = try resolveOffset(at: position)
            // NONE carries no value; a type this schema does not know is left unread, as
            // FlatBuffers' verifier does: no reader interprets it.
            guard type != 0, let member = unions[unionID].member(type) else { return }
            try verifyTable(at: target, layout: member)
        }
    }

    /// Reads the `uoffset_t` at `position` (already checked) and returns the position it points to.
    private mutating func resolveOffset(at position: Int) throws(DepotError) -> Int {
        let offset = bytes.load(UInt32.self, at: position)
        guard offset <= UInt32(Int32.max) else {
            throw DepotError(
                .offsetOutOfBounds,
                "\(path): offset \(offset) at file offset \(position) points past the 2 GiB limit of a flatbuffer; the file is damaged.")
        }
        let target = position + Int(offset)
        try check(target, length: 1, alignment: 1, what: "target of the offset at \(position)")
        return target
    }

    private mutating func verifyVector(at position: Int, elementSize: Int) throws(DepotError) -> FlatBufferVector {
        try check(position, length: 4, alignment: 4, what: "vector length")
        let count = Int(bytes.load(UInt32.self, at: position))
        guard count <= (bytes.count - position - 4) / elementSize else {
            throw DepotError(
                .offsetOutOfBounds,
                "\(path): a vector of \(count) elements of \(elementSize) bytes at offset \(position) runs past the end of the file (\(bytes.count) bytes); the file is truncated or damaged."
            )
        }
        try check(position + 4, length: count * elementSize, alignment: 1, what: "vector")
        return FlatBufferVector(bytes: bytes, position: position)
    }

    private mutating func verifyString(at position: Int) throws(DepotError) {
        try check(position, length: 4, alignment: 4, what: "string length")
        let length = Int(bytes.load(UInt32.self, at: position))
        guard length < bytes.count - position - 4 else {
            throw DepotError(
                .offsetOutOfBounds,
                "\(path): a string of \(length) bytes at offset \(position) runs past the end of the file (\(bytes.count) bytes); the file is truncated or damaged."
            )
        }
        try check(position + 4, length: length + 1, alignment: 1, what: "string")
        guard bytes.load(UInt8.self, at: position + 4 + length) == 0 else {
            throw DepotError(
                .unterminatedString,
                "\(path): the string at offset \(position) has no terminating zero byte at offset \(position + 4 + length); the file is damaged."
            )
        }
    }

    private mutating func check(_ position: Int, length: Int, alignment: Int, what: @autoclosure () -> String) throws(DepotError) {
        guard position >= 0, length >= 0, position <= bytes.count - length else {
            throw DepotError(
                .offsetOutOfBounds,
                "\(path): \(what()) at offset \(position) (\(length) bytes) lies outside the file (\(bytes.count) bytes); the file is truncated or damaged."
            )
        }
        guard position % alignment == 0 else {
            throw DepotError(
                .misaligned, "\(path): \(what()) at offset \(position) is not aligned to \(alignment) bytes; the file is damaged.")
        }
        extent = max(extent, position + length)
    }
}
