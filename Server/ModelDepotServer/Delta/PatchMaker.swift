import ModelDepotShared

/// Makes a ``Patch`` from one version of a file to the next: a ``BinaryDiff``, its three streams
/// compressed with ``Deflater``.
enum PatchMaker {
    static func patch(from old: [UInt8], to new: [UInt8]) -> [UInt8] {
        let diff = BinaryDiff(from: old, to: new)
        var controls: [UInt8] = []
        var added: [UInt8] = []
        var inserted: [UInt8] = []
        for step in diff.steps {
            controls += Patch.encodedStep(added: step.added.count, inserted: step.inserted.count, seek: step.seek)
            added += step.added
            inserted += step.inserted
        }
        let streams = [controls, added, inserted].map { $0.withUnsafeBufferPointer { Deflater.compress($0) } }
        let header = Patch.Header(oldSize: old.count, newSize: new.count, steps: diff.steps.count, controlsLength: streams[0].count,
                                  addedLength: streams[1].count, insertedLength: streams[2].count)
        return header.encoded + streams.joined()
    }
}
