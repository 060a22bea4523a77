import ModelDepotShared

/// A patch's three streams, compressed while the steps come: the controls, the added bytes as
/// ``ZeroRuns``, the inserted bytes. ``compressedCount`` (what is written so far) is a lower
/// bound of the patch's size, so a patch that cannot come under a limit is stopped early.
struct PatchStreams {
    private var controls = DeflateStream()
    private var added = DeflateStream()
    private var inserted = DeflateStream()
    /// Added bytes whose runs are not encoded yet.
    private var pendingAdded: [UInt8] = []
    /// Where in `pendingAdded` a record's start was last looked for: none starts before it.
    private var looked = 0
    private(set) var steps = 0

    /// How many added bytes come between two looks for a record's start to encode up to.
    let addedPiece: Int

    init(addedPiece: Int = 1 << 20) { self.addedPiece = addedPiece }

    var compressedCount: Int { controls.compressedCount + added.compressedCount + inserted.compressedCount }

    mutating func append(_ step: BinaryDiff.Step) {
        controls.append(Patch.encodedStep(added: step.added.count, inserted: step.inserted.count, seek: step.seek))
        pendingAdded += step.added
        inserted.append(step.inserted)
        steps += 1
        guard pendingAdded.count >= looked + addedPiece else { return }
        if let cut = Self.recordStart(in: pendingAdded, from: looked) {
            added.append(ZeroRuns.encode(Array(pendingAdded[..<cut])))
            pendingAdded.removeFirst(cut)
        }
        looked = max(0, pendingAdded.count - 3)
    }

    /// The last place in `bytes` after `from` (0: anywhere) where a record of ``ZeroRuns`` starts
    /// whatever comes after: three zeros after a byte that is not (a literal stretch ends there,
    /// and the next record's zeros begin). The runs of the bytes before it and of those from it
    /// make, one after the other, the runs of all.
    static func recordStart(in bytes: [UInt8], from lowest: Int = 0) -> Int? {
        var index = bytes.count - 3
        while index > max(lowest, 0) {
            if bytes[index] == 0, bytes[index + 1] == 0, bytes[index + 2] == 0, bytes[index - 1] != 0 { return index }
            index -= 1
        }
        return nil
    }

    /// The patch: its header, then the three streams.
    consuming func finish(oldSize: Int, newSize: Int) -> [UInt8] {
        added.append(ZeroRuns.encode(pendingAdded))
        let streams = [controls.finish(), added.finish(), inserted.finish()]
        let header = Patch.Header(
            oldSize: oldSize, newSize: newSize, steps: steps, controlsLength: streams[0].count, addedLength: streams[1].count,
            insertedLength: streams[2].count)
        return header.encoded + streams.joined()
    }
}
