/// Zip archives written byte by byte, for tests of the reader: entries stored or deflated (a run
/// of one byte, the shape of a zip bomb), laid out and listed in any order, even overlapping.
public enum TestZip {
    /// One file: its name, the bytes of its data as they lie in the archive, and its header fields.
    public struct Entry: Sendable {
        public let name: String
        /// 0 (stored) or 8 (deflated).
        public let method: UInt16
        /// The data as it lies in the archive (compressed for method 8).
        public let data: [UInt8]
        /// The content's size.
        public let size: Int
        /// The content's CRC-32.
        public let crc32: UInt32

        /// A file stored as it is.
        public static func stored(_ name: String, _ content: [UInt8]) -> Entry {
            Entry(name: name, method: 0, data: content, size: content.count, crc32: crc(of: content))
        }

        /// A file of `count` copies of `byte` (below 144), deflated with the fixed Huffman code into
        /// one literal and back-references of 258 bytes: about 2 bytes of data per KiB of content.
        public static func run(_ name: String, of byte: UInt8, count: Int) -> Entry {
            precondition(byte < 144 && count > 0)
            var writer = BitWriter()
            writer.write(1, count: 1)  // the last block
            writer.write(1, count: 2)  // fixed Huffman codes
            let literal = { (writer: inout BitWriter) in writer.writeCode(0x30 + Int(byte), length: 8) }
            literal(&writer)
            let matches = (count - 1) / 258
            for _ in 0..<matches {
                writer.writeCode(0xC0 + 5, length: 8)  // length symbol 285: 258 bytes
                writer.writeCode(0, length: 5)  // distance symbol 0: 1 byte back
            }
            for _ in 0..<((count - 1) % 258) { literal(&writer) }
            writer.writeCode(0, length: 7)  // end of block
            return Entry(name: name, method: 8, data: writer.bytes, size: count, crc32: crc(of: repeatElement(byte, count: count)))
        }
    }

    /// An entry's local header followed by its data.
    public static func record(_ entry: Entry) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes += le32(0x0403_4B50) + le16(20) + le16(0) + le16(entry.method) + le16(0) + le16(0)
        bytes += le32(entry.crc32) + le32(UInt32(entry.data.count)) + le32(UInt32(entry.size))
        bytes += le16(UInt16(entry.name.utf8.count)) + le16(0) + Array(entry.name.utf8)
        return bytes + entry.data
    }

    /// The entries' records one after the other, listed in the same order.
    public static func archive(_ entries: [Entry]) -> [UInt8] {
        var body: [UInt8] = []
        var directory: [(entry: Entry, offset: Int)] = []
        for entry in entries {
            directory.append((entry, body.count))
            body += record(entry)
        }
        return archive(body, directory: directory)
    }

    /// `body` followed by a central directory that lists `directory` in its order, each entry's
    /// local header at the offset given (counted from the start of `body`), and the end record.
    public static func archive(_ body: [UInt8], directory: [(entry: Entry, offset: Int)]) -> [UInt8] {
        var central: [UInt8] = []
        for (entry, offset) in directory {
            central += le32(0x0201_4B50) + le16(20) + le16(20) + le16(0) + le16(entry.method) + le16(0) + le16(0)
            central += le32(entry.crc32) + le32(UInt32(entry.data.count)) + le32(UInt32(entry.size))
            central += le16(UInt16(entry.name.utf8.count)) + le16(0) + le16(0) + le16(0) + le16(0) + le32(0) + le32(UInt32(offset))
            central += Array(entry.name.utf8)
        }
        let end =
            le32(0x0605_4B50) + le16(0) + le16(0) + le16(UInt16(directory.count)) + le16(UInt16(directory.count))
            + le32(UInt32(central.count)) + le32(UInt32(body.count)) + le16(0)
        return body + central + end
    }

    private static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    private static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }

    private static func crc(of bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }

    /// DEFLATE's bit order: values from their lowest bit, Huffman codes from their highest.
    private struct BitWriter {
        var bytes: [UInt8] = []
        private var pending = 0

        mutating func write(_ value: Int, count: Int) {
            for bit in 0..<count {
                if pending == 0 { bytes.append(0) }
                bytes[bytes.count - 1] |= UInt8((value >> bit) & 1) << pending
                pending = (pending + 1) % 8
            }
        }

        mutating func writeCode(_ code: Int, length: Int) {
            for bit in (0..<length).reversed() { write((code >> bit) & 1, count: 1) }
        }
    }
}
