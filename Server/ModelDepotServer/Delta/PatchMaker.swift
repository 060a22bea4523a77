import ModelDepotShared

/// Makes a ``Patch`` from one version of a file to the next: a ``BinaryDiff``, its three streams
/// compressed with ``Deflater`` (the added bytes, mostly zeros, as ``ZeroRuns`` first). Memory: both files (mapped), the old file's suffix array (4
/// bytes a byte), the streams before and after compression (at most about twice the new file).
public enum PatchMaker {
    public static func patch(from old: [UInt8], to new: [UInt8]) -> [UInt8] {
        old.withUnsafeBufferPointer { old in new.withUnsafeBufferPointer { new in patch(from: old, to: new) } }
    }

    static func patch(from old: UnsafeBufferPointer<UInt8>, to new: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var controls: [UInt8] = []
        var added: [UInt8] = []
        var inserted: [UInt8] = []
        var steps = 0
        BinaryDiff.forEachStep(from: old, to: new) { step in
            controls += Patch.encodedStep(added: step.added.count, inserted: step.inserted.count, seek: step.seek)
            added += step.added
            inserted += step.inserted
            steps += 1
        }
        let streams = [controls, ZeroRuns.encode(added), inserted].map { $0.withUnsafeBufferPointer { Deflater.compress($0) } }
        let header = Patch.Header(
            oldSize: old.count, newSize: new.count, steps: steps, controlsLength: streams[0].count,
            addedLength: streams[1].count, insertedLength: streams[2].count)
        return header.encoded + streams.joined()
    }

    /// The patch from the file at `old` to the file at `new`, both mapped, not copied.
    /// - Throws: ``DepotError`` `file_unreadable` for a file that cannot be read.
    public static func patch(fromFileAt old: String, toFileAt new: String) throws(DepotError) -> [UInt8] {
        try MappedFile(path: old).withBytes { (old) throws(DepotError) in
            try MappedFile(path: new).withBytes { new in
                patch(from: old.assumingMemoryBound(to: UInt8.self), to: new.assumingMemoryBound(to: UInt8.self))
            }
        }
    }
}
