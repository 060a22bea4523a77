import ModelDepotShared

/// Makes a ``Patch`` from one version of a file to the next: a ``BinaryDiff``, its three streams
/// compressed with ``Deflater`` as the steps come (``PatchStreams``; the added bytes, mostly zeros,
/// as ``ZeroRuns`` first). Memory: both files (mapped), the old file's suffix array (4 bytes a
/// byte), the streams before and after compression (at most about twice the new file).
public enum PatchMaker {
    /// A patch stopped once what it had compressed passed the limit: the patch could only be larger.
    public struct OverLimit: Error, Sendable {
        /// The bytes compressed when it stopped: the patch is larger still.
        public let atLeast: Int
        /// How many bytes of the new file the steps so far made.
        public let newBytesDone: Int
    }

    /// The patch from `old` to `new`, or ``OverLimit`` as soon as it is known to be over `limit` bytes.
    public static func patch(from old: [UInt8], to new: [UInt8], limit: Int = .max) -> Result<[UInt8], OverLimit> {
        old.withUnsafeBufferPointer { old in new.withUnsafeBufferPointer { new in patch(from: old, to: new, limit: limit) } }
    }

    /// The patch, or ``OverLimit`` as soon as what it has compressed is over `limit` bytes.
    static func patch(from old: UnsafeBufferPointer<UInt8>, to new: UnsafeBufferPointer<UInt8>, limit: Int) -> Result<[UInt8], OverLimit> {
        patch(from: old, to: new, anchors: TensorAnchors.between(old, new), limit: limit)
    }

    /// The patch with the changed tensors `anchors` added to their old selves.
    private static func patch(
        from old: UnsafeBufferPointer<UInt8>, to new: UnsafeBufferPointer<UInt8>, anchors: [BinaryDiff.Anchor], limit: Int
    ) -> Result<[UInt8], OverLimit> {
        var streams = PatchStreams()
        var done = 0
        do {
            try BinaryDiff.forEachStep(from: old, to: new, anchors: anchors) {
                (step: BinaryDiff.Step) throws(OverLimit) in
                streams.append(step)
                done += step.added.count + step.inserted.count
                if streams.compressedCount > limit { throw OverLimit(atLeast: streams.compressedCount, newBytesDone: done) }
            }
        } catch {
            return .failure(error)
        }
        return .success(streams.finish(oldSize: old.count, newSize: new.count))
    }

    /// ``patch(fromFileAt:toFileAt:limit:)``, and how many changed tensors of the model at `new`
    /// it adds to their old selves (``TensorAnchors``; 0 when either file is not a valid model).
    /// - Throws: ``DepotError`` `file_unreadable` for a file that cannot be read.
    public static func patchCountingAlignedTensors(fromFileAt old: String, toFileAt new: String, limit: Int = .max) throws(DepotError)
        -> (patch: Result<[UInt8], OverLimit>, alignedTensors: Int)
    {
        try withMapped(old, new) { old, new in
            let anchors = TensorAnchors.between(old, new)
            return (patch(from: old, to: new, anchors: anchors, limit: limit), anchors.count)
        }
    }

    /// The patch from the file at `old` to the file at `new`, both mapped, not copied, or
    /// ``OverLimit`` once it is known to be over `limit` bytes.
    /// - Throws: ``DepotError`` `file_unreadable` for a file that cannot be read.
    public static func patch(fromFileAt old: String, toFileAt new: String, limit: Int = .max) throws(DepotError) -> Result<
        [UInt8], OverLimit
    > {
        try withMapped(old, new) { patch(from: $0, to: $1, limit: limit) }
    }

    /// `body` of the files at `old` and `new`, both mapped.
    private static func withMapped<T>(
        _ old: String, _ new: String, _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> T
    ) throws(DepotError) -> T {
        try MappedFile(path: old).withBytes { (old) throws(DepotError) in
            try MappedFile(path: new).withBytes { new in
                body(old.assumingMemoryBound(to: UInt8.self), new.assumingMemoryBound(to: UInt8.self))
            }
        }
    }
}
