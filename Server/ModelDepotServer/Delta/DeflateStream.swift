/// DEFLATE of bytes that arrive in pieces, the same bytes however they are cut: a block is
/// compressed once three bytes after it are in (by then the matcher has hashed each of its
/// positions, as if all had come at once). What is written so far only grows, so
/// ``compressedCount`` is a lower bound of the whole stream's compressed size.
struct DeflateStream {
    private var input: [UInt8] = []
    private var writer = Deflater.BitWriter()
    private var matcher = Deflater.Matcher()
    private var start = 0

    /// The bytes of the compressed stream written so far.
    var compressedCount: Int { writer.bytes.count }

    mutating func append(_ bytes: some Collection<UInt8>) {
        input += bytes
        while input.count >= start + Deflater.blockSize + 3 {
            let range = start..<(start + Deflater.blockSize)
            input.withUnsafeBufferPointer { Deflater.writeBlock($0, range, last: false, matcher: &matcher, writer: &writer) }
            start = range.upperBound
        }
    }

    /// The whole compressed stream.
    consuming func finish() -> [UInt8] {
        var (matcher, writer, start) = (matcher, writer, start)
        input.withUnsafeBufferPointer { input in
            repeat {
                let end = min(start + Deflater.blockSize, input.count)
                Deflater.writeBlock(input, start..<end, last: end == input.count, matcher: &matcher, writer: &writer)
                start = end
            } while start < input.count
        }
        writer.alignToByte()
        return writer.bytes
    }
}
