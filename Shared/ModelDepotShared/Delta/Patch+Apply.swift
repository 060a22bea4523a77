import Foundation

extension Patch {
    /// Applies `patch` to `old` and writes the new file to `output`. The three streams are
    /// inflated into temporary files first, then read in step with the old file, 1 MiB at a
    /// time: memory stays bounded whatever the files' sizes or the patch's claims.
    /// - Parameters:
    ///   - patch: The patch's bytes, as the server made them.
    ///   - old: The file the patch starts from.
    ///   - newSize: The size the manifest signed for the new file.
    ///   - output: Where the new file is written, from its start.
    ///   - temporaryDirectory: Where the inflated streams are kept while applying (removed after).
    /// - Throws: ``DepotError`` `invalid_patch` for a patch that does not fit `old`, `newSize` or
    ///   itself; `file_unreadable` when a temporary file cannot be written or read.
    public static func apply(
        _ patch: UnsafeRawBufferPointer, to old: UnsafeRawBufferPointer, newSize: Int, output: FileHandle,
        temporaryDirectory: URL
    ) throws(DepotError) {
        let header = try header(of: patch, oldSize: old.count, newSize: newSize)
        let controlsEnd = headerSize + header.controlsLength
        let addedEnd = controlsEnd + header.addedLength
        // Runs of added bytes take at most 3 bytes for 2 (a zero, then one literal, over and over).
        var streams: [StreamFile] = []
        // Every temporary file goes, whether the patch applies or is refused halfway.
        defer { for stream in streams { stream.remove() } }
        // Together the streams inflate to at most 2.5 times the new file and 64 KiB: room for its
        // bytes and their runs, and for the server's steps (one per match), but not for a patch
        // that would fill the disk with steps.
        var budget = newSize / 2 * 5 + 65_536
        for (name, range, limit) in [
            ("controls", headerSize..<controlsEnd, header.steps * 24), ("added", controlsEnd..<addedEnd, newSize / 2 * 3 + 32),
            ("inserted", addedEnd..<patch.count, newSize),
        ] {
            let stream = try StreamFile(
                inflating: UnsafeRawBufferPointer(rebasing: patch[range]), limit: min(limit, budget), name: name, in: temporaryDirectory)
            budget -= stream.size
            streams.append(stream)
        }
        let (controls, inserted) = (streams[0], streams[2])
        let added = ZeroRunReader(streams[1])
        guard controls.size == header.steps * 24 else {
            throw invalid("its controls hold \(controls.size) bytes for \(header.steps) steps")
        }
        var oldOffset = 0
        var written = 0
        for _ in 0..<header.steps {
            let control = try controls.read(24)
            let addedCount = Int(truncatingIfNeeded: control.withUnsafeBytes { number($0, at: 0) })
            let insertedCount = Int(truncatingIfNeeded: control.withUnsafeBytes { number($0, at: 8) })
            let seek = Int(truncatingIfNeeded: control.withUnsafeBytes { number($0, at: 16) })
            guard addedCount >= 0, insertedCount >= 0, addedCount <= newSize - written, insertedCount <= newSize - written - addedCount,
                oldOffset >= 0, oldOffset <= old.count, addedCount <= old.count - oldOffset
            else {
                throw invalid("a step reads outside the old file or writes past the new one")
            }
            var done = 0
            while done < addedCount {
                var piece = try added.read(min(1 << 20, addedCount - done))
                for i in piece.indices { piece[i] &+= old[oldOffset + done + i] }
                try write(piece, to: output)
                done += piece.count
            }
            done = 0
            while done < insertedCount {
                let piece = try inserted.read(min(1 << 20, insertedCount - done))
                try write(piece, to: output)
                done += piece.count
            }
            written += addedCount + insertedCount
            let (moved, overflow) = (oldOffset + addedCount).addingReportingOverflow(seek)
            guard !overflow else { throw invalid("a step moves outside the old file") }
            oldOffset = moved
        }
        guard written == newSize, added.isFinished, inserted.remaining == 0 else {
            throw invalid("its steps make \(written) bytes of \(newSize), with bytes left over")
        }
    }

    private static func write(_ bytes: [UInt8], to output: FileHandle) throws(DepotError) {
        do {
            try output.write(contentsOf: bytes)
        } catch {
            throw DepotError(.fileUnreadable, "Could not write the patched file.", cause: "\(error)")
        }
    }

    /// The added bytes, decoded from their runs (``ZeroRuns``) as the steps ask for them.
    private final class ZeroRunReader {
        private let stream: StreamFile
        private var buffer: [UInt8] = []
        private var position = 0
        private var zeros = 0
        private var literals = 0

        init(_ stream: StreamFile) { self.stream = stream }

        /// Whether every run was used up.
        var isFinished: Bool { zeros == 0 && literals == 0 && position == buffer.count && stream.remaining == 0 }

        /// The next `count` added bytes (a patch whose runs hold fewer is invalid).
        func read(_ count: Int) throws(DepotError) -> [UInt8] {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(count)
            while bytes.count < count {
                if zeros == 0 && literals == 0 {
                    zeros = try number()
                    literals = try number()
                    continue
                }
                let wanted = count - bytes.count
                if zeros > 0 {
                    let taken = min(zeros, wanted)
                    bytes.append(contentsOf: repeatElement(0, count: taken))
                    zeros -= taken
                } else {
                    if position == buffer.count { try refill() }
                    let taken = min(literals, wanted, buffer.count - position)
                    bytes += buffer[position..<(position + taken)]
                    position += taken
                    literals -= taken
                }
            }
            return bytes
        }

        private func number() throws(DepotError) -> Int {
            var value = 0
            for shift in stride(from: 0, to: 63, by: 7) {
                if position == buffer.count { try refill() }
                let byte = buffer[position]
                position += 1
                value |= Int(byte & 0x7F) << shift
                if byte < 0x80 {
                    guard value >= 0 else { break }
                    return value
                }
            }
            throw Patch.invalid("its added stream holds a count past 2^62")
        }

        private func refill() throws(DepotError) {
            guard stream.remaining > 0 else { throw Patch.invalid("a step needs more bytes than its streams hold") }
            buffer = try stream.read(min(1 << 20, stream.remaining))
            position = 0
        }
    }

    /// One of a patch's streams, inflated into a temporary file, read back in order.
    private final class StreamFile {
        let url: URL
        let size: Int
        private let handle: FileHandle
        private var read = 0
        var remaining: Int { size - read }

        init(inflating compressed: UnsafeRawBufferPointer, limit: Int, name: String, in directory: URL) throws(DepotError) {
            url = directory.appendingPathComponent("patch-\(name)-\(UUID().uuidString)")
            guard let writer = PrivateFile.create(at: url) else {
                throw DepotError(.fileUnreadable, "Could not create a temporary file to apply a patch in '\(directory.path)'.")
            }
            var failure: (any Error)?
            let result = Inflater.inflate(FlatBufferBytes(raw: compressed), limit: limit) { piece in
                guard failure == nil else { return }
                do { try writer.write(contentsOf: piece) } catch { failure = error }
            }
            try? writer.close()
            var refusal: DepotError? =
                switch result {
                case .success: nil
                case .failure(.tooLarge): Patch.invalid("its \(name) stream inflates past \(limit) bytes")
                case .failure(.damaged(let why)): Patch.invalid("its \(name) stream is damaged (\(why))")
                }
            if let failure {
                refusal = DepotError(.fileUnreadable, "Could not write a temporary file to apply a patch.", cause: "\(failure)")
            }
            let reader = refusal == nil ? FileHandle(forReadingAtPath: url.path) : nil
            guard let reader, case .success(let produced) = result else {
                try? FileManager.default.removeItem(at: url)
                throw refusal ?? DepotError(.fileUnreadable, "Could not read back a temporary file while applying a patch.")
            }
            size = produced
            handle = reader
        }

        /// The next `count` bytes (fewer is an invalid patch).
        func read(_ count: Int) throws(DepotError) -> [UInt8] {
            guard count <= remaining else { throw Patch.invalid("a step needs more bytes than its streams hold") }
            let data: Data?
            do {
                data = try handle.read(upToCount: count)
            } catch {
                throw DepotError(.fileUnreadable, "Could not read back a temporary file while applying a patch.", cause: "\(error)")
            }
            guard let data, data.count == count else { throw Patch.invalid("a stream ended early") }
            read += count
            return [UInt8](data)
        }

        func remove() {
            try? handle.close()
            try? FileManager.default.removeItem(at: url)
        }
    }
}
