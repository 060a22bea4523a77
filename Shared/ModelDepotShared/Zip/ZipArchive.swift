/// The zip archive appended to a model (how TFLite Model Metadata packs its associated files):
/// the central directory read and checked against the local headers, entries stored or deflated.
///
/// Offsets in the central directory may count from the start of the file (Python's `zipfile` in
/// append mode) or from the start of the archive (a zip tool); both are read. Every offset, size
/// and name is checked before it is used, so a damaged archive is a ``DepotError``
/// (`invalid_associated_files`), never a crash. Entries may not share bytes: each one's local
/// header and data come after the previous one's in central directory order, so no compressed
/// block is inflated twice, and what they inflate to counts against one budget
/// (a ``Budget``).
struct ZipArchive: Sendable {
    /// One file in the archive.
    struct Entry: Sendable, Hashable {
        let name: String
        /// 0 (stored) or 8 (deflated).
        let method: UInt16
        let compressedSize: Int
        let size: Int
        let crc32: UInt32
        /// Where the entry's local header starts in the file.
        let headerOffset: Int
        /// Where the entry's data starts in the file.
        let dataOffset: Int

        /// Where the entry's data ends in the file.
        var dataEnd: Int { dataOffset + compressedSize }
    }

    /// The most entries read.
    static let maximumEntries = 4096

    /// How many bytes the entries of one archive may inflate to, together.
    struct Budget {
        /// The bytes allowed in all.
        let limit: Int
        /// The bytes still allowed.
        fileprivate(set) var remaining: Int

        init(limit: Int) {
            self.limit = limit
            remaining = limit
        }
    }

    let entries: [Entry]
    private let bytes: FlatBufferBytes

    /// Finds and reads the archive at the end of `bytes`, if there is one after `start`.
    /// - Returns: `nil` when the bytes from `start` on are not a zip archive at all.
    /// - Throws: ``DepotError`` (`invalid_associated_files`) when they are one, but damaged.
    static func find(in bytes: FlatBufferBytes, after start: Int) throws(DepotError) -> ZipArchive? {
        guard bytes.count - start >= 22 else { return nil }
        var position = bytes.count - 22
        let lowest = max(start, bytes.count - 22 - 0xFFFF)
        while position >= lowest {
            if bytes.load(UInt32.self, at: position) == 0x0605_4B50,
                Int(bytes.load(UInt16.self, at: position + 20)) == bytes.count - position - 22
            {
                return try ZipArchive(bytes: bytes, start: start, endRecord: position)
            }
            position -= 1
        }
        if bytes.load(UInt32.self, at: start) == 0x0403_4B50 {
            throw damaged("the data after the model starts like a zip archive but has no end record: it is truncated")
        }
        return nil
    }

    private static func damaged(_ what: String) -> DepotError {
        DepotError(
            .invalidAssociatedFiles,
            "The zip of associated files appended to the model is damaged: \(what). Re-pack the metadata (tflite-support's MetadataPopulator) and upload again."
        )
    }

    private init(bytes: FlatBufferBytes, start: Int, endRecord: Int) throws(DepotError) {
        self.bytes = bytes
        let disk = bytes.load(UInt16.self, at: endRecord + 4), directoryDisk = bytes.load(UInt16.self, at: endRecord + 6)
        let countOnDisk = Int(bytes.load(UInt16.self, at: endRecord + 8)), count = Int(bytes.load(UInt16.self, at: endRecord + 10))
        let directorySize = Int(bytes.load(UInt32.self, at: endRecord + 12))
        let directoryOffset = Int(bytes.load(UInt32.self, at: endRecord + 16))
        guard disk == 0, directoryDisk == 0, countOnDisk == count else { throw Self.damaged("it spans several disks") }
        guard count != 0xFFFF, directorySize != 0xFFFF_FFFF, directoryOffset != 0xFFFF_FFFF else {
            throw Self.damaged("it is a ZIP64 archive, which associated files never need")
        }
        guard count <= Self.maximumEntries else { throw Self.damaged("it lists \(count) files; at most \(Self.maximumEntries) are read") }
        let directory = endRecord - directorySize
        guard directorySize >= 0, directory >= start else {
            throw Self.damaged("its central directory of \(directorySize) bytes would start before the end of the model")
        }
        // Offsets count from the start of the archive or of the file; the difference is the same for all.
        let shift = directory - directoryOffset
        guard shift >= 0 else { throw Self.damaged("its central directory offset \(directoryOffset) lies past the directory itself") }
        var entries: [Entry] = []
        var names = Set<String>()
        var position = directory
        for index in 0..<count {
            guard position + 46 <= endRecord, bytes.load(UInt32.self, at: position) == 0x0201_4B50 else {
                throw Self.damaged("entry \(index) of its central directory is missing or cut off")
            }
            let entry = try Self.entry(
                in: bytes, at: position, shift: shift, archiveStart: start, directory: directory,
                endRecord: endRecord, index: index)
            guard names.insert(entry.name).inserted else { throw Self.damaged("it holds '\(entry.name)' twice") }
            if let previous = entries.last, entry.headerOffset < previous.dataEnd {
                throw Self.damaged(
                    "'\(entry.name)' starts at offset \(entry.headerOffset), inside or before '\(previous.name)' (offsets \(previous.headerOffset)..<\(previous.dataEnd)), which the central directory lists before it; entries must follow each other without sharing bytes"
                )
            }
            entries.append(entry)
            position +=
                46 + Int(bytes.load(UInt16.self, at: position + 28)) + Int(bytes.load(UInt16.self, at: position + 30))
                + Int(bytes.load(UInt16.self, at: position + 32))
        }
        guard position == endRecord else {
            throw Self.damaged("its central directory holds \(endRecord - position) bytes more or less than its \(count) entries")
        }
        self.entries = entries
    }

    private static func entry(
        in bytes: FlatBufferBytes, at position: Int, shift: Int, archiveStart: Int, directory: Int,
        endRecord: Int, index: Int
    ) throws(DepotError) -> Entry {
        let flags = bytes.load(UInt16.self, at: position + 8)
        let method = bytes.load(UInt16.self, at: position + 10)
        let crc = bytes.load(UInt32.self, at: position + 16)
        let compressedSize = Int(bytes.load(UInt32.self, at: position + 20)), size = Int(bytes.load(UInt32.self, at: position + 24))
        let nameLength = Int(bytes.load(UInt16.self, at: position + 28))
        let localOffset = Int(bytes.load(UInt32.self, at: position + 42))
        guard position + 46 + nameLength <= endRecord else { throw damaged("entry \(index)'s name runs past the archive") }
        let nameBytes = bytes.bytes(at: position + 46, length: nameLength)
        guard nameLength > 0, let name = String(validating: nameBytes, as: UTF8.self) else {
            throw damaged("entry \(index) has an empty name or one that is not UTF-8")
        }
        guard flags & 1 == 0 else { throw damaged("'\(name)' is encrypted") }
        guard method == 0 || method == 8 else {
            throw damaged("'\(name)' uses compression method \(method); only stored (0) and deflated (8) are read")
        }
        guard compressedSize != 0xFFFF_FFFF, size != 0xFFFF_FFFF, localOffset != 0xFFFF_FFFF else {
            throw damaged("'\(name)' has ZIP64 sizes")
        }
        guard method == 8 || compressedSize == size else {
            throw damaged("'\(name)' is stored but its sizes differ (\(compressedSize) and \(size))")
        }
        let local = localOffset + shift
        guard local >= archiveStart, local + 30 <= directory, bytes.load(UInt32.self, at: local) == 0x0403_4B50 else {
            throw damaged("the local header of '\(name)' is not at offset \(local)")
        }
        let localNameLength = Int(bytes.load(UInt16.self, at: local + 26)), extraLength = Int(bytes.load(UInt16.self, at: local + 28))
        guard bytes.bytes(at: local + 30, length: localNameLength) == nameBytes else {
            throw damaged("the local header of '\(name)' names another file")
        }
        let dataOffset = local + 30 + localNameLength + extraLength
        guard dataOffset + compressedSize <= directory else {
            throw damaged("the data of '\(name)' (\(compressedSize) bytes) runs into the central directory")
        }
        return Entry(
            name: name, method: method, compressedSize: compressedSize, size: size, crc32: crc, headerOffset: local,
            dataOffset: dataOffset)
    }

    /// Decompresses an entry and checks its size and CRC-32, passing its bytes to `sink` in pieces.
    /// - Parameters:
    ///   - entry: One of ``entries``.
    ///   - budget: What the entries read so far left; what this one produces is taken off.
    ///     Inflating stops as soon as it is spent, whatever the entry's header says.
    ///   - sink: Receives the content in order.
    /// - Throws: ``DepotError``: `invalid_associated_files` when the data is damaged,
    ///   `associated_files_too_large` when the entry would produce more than `budget` bytes.
    func read(_ entry: Entry, within budget: inout Budget, into sink: ([UInt8]) -> Void) throws(DepotError) {
        var crc = CRC32()
        var produced = 0
        if entry.method == 0 {
            guard entry.size <= budget.remaining else { throw overBudget(entry, budget: budget) }
            let piece = 1 << 20
            for offset in stride(from: 0, to: entry.size, by: piece) {
                let bytes = bytes.bytes(at: entry.dataOffset + offset, length: min(piece, entry.size - offset))
                crc.update(bytes)
                sink(bytes)
                produced += bytes.count
            }
        } else {
            let compressed = bytes.slice(entry.dataOffset..<entry.dataEnd)
            let limit = min(entry.size, budget.remaining)
            switch Inflater.inflate(
                compressed, limit: limit,
                into: { piece in
                    crc.update(piece)
                    sink(piece)
                })
            {
            case .success(let count): produced = count
            case .failure(.damaged(let what)): throw Self.damaged("'\(entry.name)' does not inflate: \(what)")
            case .failure(.tooLarge) where limit < entry.size: throw overBudget(entry, budget: budget)
            case .failure(.tooLarge): throw Self.damaged("'\(entry.name)' inflates to more than the \(entry.size) bytes its header says")
            }
        }
        budget.remaining -= produced
        guard produced == entry.size else {
            throw Self.damaged("'\(entry.name)' holds \(produced) bytes, but its header says \(entry.size)")
        }
        guard crc.value == entry.crc32 else {
            throw Self.damaged(
                "'\(entry.name)' has CRC-32 \(String(crc.value, radix: 16)), but its header says \(String(entry.crc32, radix: 16))")
        }
    }

    private func overBudget(_ entry: Entry, budget: Budget) -> DepotError {
        DepotError(
            .associatedFilesTooLarge,
            "The associated files appended to the model inflate to more than the \(budget.limit) bytes accepted for all of them: '\(entry.name)' (\(entry.size) bytes by its header) goes past the \(budget.remaining) bytes the files before it left. Pack smaller files, or raise the limit (TFLiteVerificationPolicy.maximumAssociatedFilesSize; depot serve --max-associated-files-size)."
        )
    }

    /// An entry's whole content, checked, taken off `budget` like ``read(_:within:into:)``.
    func contents(of entry: Entry, within budget: inout Budget) throws(DepotError) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(min(entry.size, budget.remaining))
        try read(entry, within: &budget) { result.append(contentsOf: $0) }
        return result
    }
}
