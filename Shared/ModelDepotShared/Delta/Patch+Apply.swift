import Foundation

extension Patch {
    /// Applies `patch` to `old` and writes the new file to `output`. The three streams are
    /// inflated into temporary files first, then read in step with the old file through buffers
    /// of 1 MiB, and the new file is written 1 MiB at a time: memory stays bounded whatever the
    /// files' sizes or the patch's claims, and a patch of many short steps costs no system call
    /// per step.
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
        let writer = OutputFile(output)
        var oldOffset = 0
        var written = 0
        for _ in 0..<header.steps {
            let addedCount = Int(truncatingIfNeeded: try controls.number())
            let insertedCount = Int(truncatingIfNeeded: try controls.number())
            let seek = Int(truncatingIfNeeded: try controls.number())
            guard addedCount >= 0, insertedCount >= 0, addedCount <= newSize - written, insertedCount <= newSize - written - addedCount,
                oldOffset >= 0, oldOffset <= old.count, addedCount <= old.count - oldOffset
            else {
                throw invalid("a step reads outside the old file or writes past the new one")
            }
            try added.add(UnsafeRawBufferPointer(rebasing: old[oldOffset..<(oldOffset + addedCount)]), into: writer)
            try inserted.take(insertedCount) { (piece) throws(DepotError) in try writer.append(piece) }
            written += addedCount + insertedCount
            let (moved, overflow) = (oldOffset + addedCount).addingReportingOverflow(seek)
            guard !overflow else { throw invalid("a step moves outside the old file") }
            oldOffset = moved
        }
        guard written == newSize, added.isFinished, inserted.remaining == 0 else {
            throw invalid("its steps make \(written) bytes of \(newSize), with bytes left over")
        }
        try writer.flush()
    }

    /// The new file, gathered in a buffer of 1 MiB and written when it fills.
    private final class OutputFile {
        private static let capacity = 1 << 20
        private let handle: FileHandle
        private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
        private var count = 0

        init(_ handle: FileHandle) { self.handle = handle }

        deinit { buffer.deallocate() }

        /// Writes `bytes` after those before.
        func append(_ bytes: UnsafeRawBufferPointer) throws(DepotError) {
            var done = 0
            while done < bytes.count {
                if count == Self.capacity { try flush() }
                let taken = min(bytes.count - done, Self.capacity - count)
                (buffer.baseAddress! + count).copyMemory(from: bytes.baseAddress! + done, byteCount: taken)
                count += taken
                done += taken
            }
        }

        /// Writes the bytewise sums (modulo 256) of `added` and the old bytes `base`, as long.
        func appendSums(_ added: UnsafeRawBufferPointer, _ base: UnsafeRawBufferPointer) throws(DepotError) {
            var done = 0
            while done < added.count {
                if count == Self.capacity { try flush() }
                let taken = min(added.count - done, Self.capacity - count)
                for index in 0..<taken { buffer[count + index] = added[done + index] &+ base[done + index] }
                count += taken
                done += taken
            }
        }

        /// Writes what the buffer holds.
        func flush() throws(DepotError) {
            do {
                try handle.write(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            } catch {
                throw DepotError(.fileUnreadable, "Could not write the patched file.", cause: "\(error)")
            }
            count = 0
        }
    }

    /// The added bytes, decoded from their runs (``ZeroRuns``) as the steps ask for them.
    private final class ZeroRunReader {
        private let stream: StreamFile
        private var zeros = 0
        private var literals = 0

        init(_ stream: StreamFile) { self.stream = stream }

        /// Whether every run was used up.
        var isFinished: Bool { zeros == 0 && literals == 0 && stream.remaining == 0 }

        /// Writes the next `base.count` added bytes, each added to its byte of `base` (the old
        /// file's bytes the step starts from); a patch whose runs hold fewer is invalid.
        func add(_ base: UnsafeRawBufferPointer, into output: OutputFile) throws(DepotError) {
            var done = 0
            while done < base.count {
                if zeros == 0 && literals == 0 {
                    zeros = try number()
                    literals = try number()
                    continue
                }
                let wanted = base.count - done
                if zeros > 0 {
                    // An added zero leaves the old byte as it is.
                    let taken = min(zeros, wanted)
                    try output.append(UnsafeRawBufferPointer(rebasing: base[done..<(done + taken)]))
                    zeros -= taken
                    done += taken
                } else {
                    let taken = min(literals, wanted)
                    try stream.take(taken) { (piece) throws(DepotError) in
                        try output.appendSums(piece, UnsafeRawBufferPointer(rebasing: base[done..<(done + piece.count)]))
                        done += piece.count
                    }
                    literals -= taken
                }
            }
        }

        private func number() throws(DepotError) -> Int {
            var value = 0
            for shift in stride(from: 0, to: 63, by: 7) {
                let byte = try stream.byte()
                value |= Int(byte & 0x7F) << shift
                if byte < 0x80 {
                    guard value >= 0 else { break }
                    return value
                }
            }
            throw Patch.invalid("its added stream holds a count past 2^62")
        }
    }

    /// One of a patch's streams, inflated into a temporary file, read back in order through a
    /// buffer of 1 MiB.
    private final class StreamFile {
        private static let capacity = 1 << 20
        let url: URL
        let size: Int
        private let handle: FileHandle
        private let buffer: UnsafeMutableRawBufferPointer
        /// The buffer's bytes not yet taken: `position..<end`.
        private var position = 0
        private var end = 0
        /// Bytes read from the file into the buffer.
        private var read = 0
        /// Bytes not yet taken.
        var remaining: Int { size - read + end - position }

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
            buffer = .allocate(byteCount: Self.capacity, alignment: 16)
        }

        deinit { buffer.deallocate() }

        /// The next byte.
        func byte() throws(DepotError) -> UInt8 {
            if position == end { try refill() }
            defer { position += 1 }
            return buffer[position]
        }

        /// The next 8 bytes as a little-endian number.
        func number() throws(DepotError) -> UInt64 {
            var value: UInt64 = 0
            for index in 0..<8 { value |= UInt64(try byte()) << (8 * index) }
            return value
        }

        /// Hands the next `count` bytes to `body`, in the pieces the buffer holds them in (fewer
        /// than `count` left is an invalid patch).
        func take(_ count: Int, _ body: (UnsafeRawBufferPointer) throws(DepotError) -> Void) throws(DepotError) {
            guard count <= remaining else { throw Patch.invalid("a step needs more bytes than its streams hold") }
            var left = count
            while left > 0 {
                if position == end { try refill() }
                let taken = min(left, end - position)
                try body(UnsafeRawBufferPointer(rebasing: buffer[position..<(position + taken)]))
                position += taken
                left -= taken
            }
        }

        /// Reads the file's next bytes into the buffer, which holds none still to be taken.
        private func refill() throws(DepotError) {
            guard read < size else { throw Patch.invalid("a step needs more bytes than its streams hold") }
            let data: Data?
            do {
                data = try handle.read(upToCount: min(Self.capacity, size - read))
            } catch {
                throw DepotError(.fileUnreadable, "Could not read back a temporary file while applying a patch.", cause: "\(error)")
            }
            guard let data, !data.isEmpty else { throw Patch.invalid("a stream ended early") }
            buffer.copyBytes(from: data)
            (position, end) = (0, data.count)
            read += data.count
        }

        func remove() {
            try? handle.close()
            try? FileManager.default.removeItem(at: url)
        }
    }
}
