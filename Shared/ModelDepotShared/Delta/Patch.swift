import Foundation

/// A binary patch that turns one version of a file into the next (made by the server,
/// applied by the device). Its layout, all numbers unsigned 64-bit little-endian:
///
///     "MDPATCH1"  old size  new size  steps  controls length  added length  inserted length
///     controls: DEFLATE of each step's (added count, inserted count, seek as two's complement)
///     added:    DEFLATE of the runs (``ZeroRuns``) of the bytes added to the old file's, every step's in turn
///     inserted: DEFLATE of the bytes inserted as they are, every step's in turn
///
/// Applying checks every length against the others and against the files, so a damaged or
/// hostile patch is an `invalid_patch` error, never a read outside a file; whether the result is
/// the file the owner signed is the caller's check (its size and SHA-256 against the manifest).
public enum Patch {
    static let magic = Array("MDPATCH1".utf8)
    static let headerSize = 56

    /// The numbers at the start of a patch.
    public struct Header: Sendable, Hashable {
        public var oldSize: Int
        public var newSize: Int
        public var steps: Int
        public var controlsLength: Int
        public var addedLength: Int
        public var insertedLength: Int

        public init(oldSize: Int, newSize: Int, steps: Int, controlsLength: Int, addedLength: Int, insertedLength: Int) {
            self.oldSize = oldSize
            self.newSize = newSize
            self.steps = steps
            self.controlsLength = controlsLength
            self.addedLength = addedLength
            self.insertedLength = insertedLength
        }

        /// The header's bytes.
        public var encoded: [UInt8] {
            Patch.magic + [oldSize, newSize, steps, controlsLength, addedLength, insertedLength].flatMap(Patch.littleEndian)
        }
    }

    /// One step's entry in the controls stream.
    public static func encodedStep(added: Int, inserted: Int, seek: Int) -> [UInt8] {
        littleEndian(added) + littleEndian(inserted) + littleEndian(seek)
    }

    static func littleEndian(_ value: Int) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: Int64(value)) >> (8 * $0)) }
    }

    static func number(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * $1) }
    }

    /// Reads and checks a patch's header against the patch's size and the file it patches.
    /// - Throws: ``DepotError`` `invalid_patch` naming what does not fit.
    public static func header(of patch: UnsafeRawBufferPointer, oldSize: Int, newSize: Int) throws(DepotError) -> Header {
        guard patch.count >= headerSize, Array(patch[0..<8]) == magic else {
            throw invalid("it does not start with a patch header")
        }
        var fields: [Int] = []
        for index in 0..<6 {
            let value = number(patch, at: 8 + 8 * index)
            guard value <= UInt64(Int.max / 32) else { throw invalid("field \(index + 1) of its header is \(value)") }
            fields.append(Int(value))
        }
        let header = Header(
            oldSize: fields[0], newSize: fields[1], steps: fields[2], controlsLength: fields[3], addedLength: fields[4],
            insertedLength: fields[5])
        guard header.oldSize == oldSize else { throw invalid("it patches a file of \(header.oldSize) bytes, not \(oldSize)") }
        guard header.newSize == newSize else { throw invalid("it makes a file of \(header.newSize) bytes, not \(newSize)") }
        guard header.steps <= newSize + 1 else { throw invalid("it has \(header.steps) steps for \(newSize) bytes") }
        guard headerSize + header.controlsLength + header.addedLength + header.insertedLength == patch.count else {
            throw invalid("its streams' lengths do not add up to its \(patch.count) bytes")
        }
        return header
    }

    static func invalid(_ why: String) -> DepotError {
        DepotError(.invalidPatch, "The patch is not valid: \(why). The full file is downloaded instead.")
    }
}
