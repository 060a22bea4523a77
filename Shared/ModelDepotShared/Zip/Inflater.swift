/// Decompresses raw DEFLATE data (RFC 1951), the compression of zip entries, in pure Swift.
///
/// Output goes to a sink in pieces of at most about 1 MiB, so a large entry is never held
/// whole; only the 32 KiB window that back-references may reach is kept. Damaged input is a
/// ``Failure`` naming what is wrong, never a crash or a hang: every read is bounds-checked and
/// the output stops at `limit` bytes.
struct Inflater {
    /// Why inflating stopped early.
    enum Failure: Error, Equatable {
        /// The data is not valid DEFLATE; the text says where.
        case damaged(String)
        /// The data would produce more than the limit.
        case tooLarge
    }

    private static let window = 32 << 10
    private static let flushSize = 1 << 20
    /// The output held at most: a flush's worth, the window, and a longest match.
    private static let capacity = flushSize + window + 258
    private static let codeLengthOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    /// A canonical Huffman code: how many codes of each length, and the symbols in code order;
    /// plus a table that decodes every code of up to ``fastBits`` bits in one look-up.
    private struct Huffman {
        static let fastBits = 11
        var counts = [Int](repeating: 0, count: 16)
        var symbols: [Int] = []
        /// By the next ``fastBits`` bits of input: `symbol << 4 | length`, or 0 for a longer code.
        var fast = [UInt16](repeating: 0, count: 1 << fastBits)

        /// Builds the code; `nil` when the lengths over-subscribe the code space.
        init?(lengths: ArraySlice<Int>, allowIncomplete: Bool) {
            for length in lengths { counts[length] += 1 }
            var left = 1
            for length in 1...15 {
                left = left * 2 - counts[length]
                if left < 0 { return nil }
            }
            if left > 0, !allowIncomplete, lengths.contains(where: { $0 > 0 }) {
                // Only a code with a single symbol may be incomplete (RFC 1951, 3.2.7).
                guard counts[1...].reduce(0, +) == 1 else { return nil }
            }
            counts[0] = 0
            var offsets = [Int](repeating: 0, count: 16)
            for length in 1..<15 { offsets[length + 1] = offsets[length] + counts[length] }
            symbols = [Int](repeating: 0, count: lengths.count)
            for (symbol, length) in zip(0..., lengths) where length != 0 {
                symbols[offsets[length]] = symbol
                offsets[length] += 1
            }
            var next = [Int](repeating: 0, count: 16)
            var code = 0
            for length in 1...15 {
                code = (code + counts[length - 1]) << 1
                next[length] = code
            }
            for (symbol, length) in zip(0..., lengths) where length != 0 {
                let assigned = next[length]
                next[length] += 1
                guard length <= Self.fastBits else { continue }
                // Codes are sent from their first bit on; the input is read from its lowest bit.
                var reversed = 0
                for bit in 0..<length where assigned & (1 << (length - 1 - bit)) != 0 { reversed |= 1 << bit }
                for index in stride(from: reversed, to: 1 << Self.fastBits, by: 1 << length) {
                    fast[index] = UInt16(symbol << 4 | length)
                }
            }
        }
    }

    private let input: FlatBufferBytes
    private let limit: Int
    private var position = 0
    private var bitBuffer: UInt64 = 0
    private var bitCount = 0
    /// The output not yet handed to the sink: at least the window's worth once there was that
    /// much, at most ``capacity``.
    private let output: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var produced = 0
    private let sink: ([UInt8]) -> Void

    /// Inflates all of `input`.
    /// - Parameters:
    ///   - input: The compressed bytes (a zip entry's data).
    ///   - limit: The most bytes to produce.
    ///   - sink: Receives the output in order, in pieces.
    /// - Returns: How many bytes were produced, or why inflating stopped.
    static func inflate(_ input: FlatBufferBytes, limit: Int, into sink: ([UInt8]) -> Void) -> Result<Int, Failure> {
        // Output under `limit` never reaches a flush: a small one needs no more than itself and a match.
        let output = UnsafeMutablePointer<UInt8>.allocate(capacity: limit < capacity - 258 ? max(limit, 0) + 258 : capacity)
        defer { output.deallocate() }
        return withoutActuallyEscaping(sink) { sink in
            var inflater = Inflater(input: input, limit: limit, output: output, sink: sink)
            return Result { () throws(Failure) in
                try inflater.run()
                return inflater.produced
            }
        }
    }

    private init(input: FlatBufferBytes, limit: Int, output: UnsafeMutablePointer<UInt8>, sink: @escaping ([UInt8]) -> Void) {
        self.input = input
        self.limit = limit
        self.output = output
        self.sink = sink
    }

    private mutating func run() throws(Failure) {
        var last = false
        while !last {
            last = try bits(1) == 1
            switch try bits(2) {
            case 0: try stored()
            case 1: try fixed()
            case 2: try dynamic()
            default: throw Failure.damaged("block type 3 at byte \(position) is reserved")
            }
        }
        sink(Array(UnsafeBufferPointer(start: output, count: count)))
        count = 0
    }

    /// Fills the bit buffer with whole bytes, as far as the input goes.
    private mutating func refill() {
        if bitCount <= 56, position + 8 <= input.count {
            let bytes = (63 - bitCount) >> 3
            let word = input.load(UInt64.self, at: position) & ((1 << UInt64(bytes * 8)) - 1)
            bitBuffer |= word << UInt64(bitCount)
            position += bytes
            bitCount += bytes * 8
            return
        }
        while bitCount <= 56, position < input.count {
            bitBuffer |= UInt64(input.load(UInt8.self, at: position)) << UInt64(bitCount)
            position += 1
            bitCount += 8
        }
    }

    private mutating func bits(_ count: Int) throws(Failure) -> Int {
        if bitCount < count {
            refill()
            guard bitCount >= count else { throw Failure.damaged("the data ends inside a block") }
        }
        let value = Int(bitBuffer & ((1 << UInt64(count)) - 1))
        bitBuffer >>= UInt64(count)
        bitCount -= count
        return value
    }

    private mutating func emit(_ byte: UInt8) throws(Failure) {
        guard produced < limit else { throw Failure.tooLarge }
        output[count] = byte
        count += 1
        produced += 1
        flushIfFull()
    }

    /// Hands all but the window back-references may reach to the sink, once there is enough:
    /// after it, fewer than ``flushSize`` and the window are held, so a match of up to 258 bytes
    /// fits in ``capacity``.
    private mutating func flushIfFull() {
        guard count >= Self.flushSize + Self.window else { return }
        sink(Array(UnsafeBufferPointer(start: output, count: Self.flushSize)))
        count -= Self.flushSize
        UnsafeMutableRawPointer(output).copyMemory(from: output + Self.flushSize, byteCount: count)
    }

    private mutating func stored() throws(Failure) {
        // Skip to the next byte boundary; whole bytes already in the buffer go back to the input.
        position -= bitCount / 8
        bitBuffer = 0
        bitCount = 0
        guard position + 4 <= input.count else { throw Failure.damaged("a stored block's length is cut off") }
        let length = Int(input.load(UInt16.self, at: position))
        let complement = Int(input.load(UInt16.self, at: position + 2))
        position += 4
        guard length == ~complement & 0xFFFF else {
            throw Failure.damaged("a stored block's length \(length) does not match its complement")
        }
        guard position + length <= input.count else { throw Failure.damaged("a stored block of \(length) bytes runs past the data") }
        for index in position..<(position + length) { try emit(input.load(UInt8.self, at: index)) }
        position += length
    }

    private mutating func decode(_ code: Huffman) throws(Failure) -> Int {
        if bitCount < Huffman.fastBits { refill() }
        let entry = code.fast[Int(bitBuffer & UInt64((1 << Huffman.fastBits) - 1))]
        let length = Int(entry & 15)
        if entry != 0, length <= bitCount {
            bitBuffer >>= UInt64(length)
            bitCount -= length
            return Int(entry >> 4)
        }
        var value = 0, first = 0, index = 0
        for length in 1...15 {
            value |= try bits(1)
            let count = code.counts[length]
            if value - count < first { return code.symbols[index + (value - first)] }
            index += count
            first = (first + count) << 1
            value <<= 1
        }
        throw Failure.damaged("a Huffman code at byte \(position) matches no symbol")
    }

    private mutating func codes(literals: Huffman, distances: Huffman) throws(Failure) {
        try literals.fast.withUnsafeBufferPointer { (fast) throws(Failure) in try codes(literals, fast: fast, distances: distances) }
    }

    /// ``codes(literals:distances:)`` with the literal code's look-up table at hand: a literal
    /// whose code the table holds (nearly every one) is decoded and written in place.
    private mutating func codes(_ literals: Huffman, fast: UnsafeBufferPointer<UInt16>, distances: Huffman) throws(Failure) {
        while true {
            if bitCount < Huffman.fastBits { refill() }
            let entry = fast[Int(bitBuffer & UInt64((1 << Huffman.fastBits) - 1))]
            let codeLength = Int(entry & 15)
            let symbol: Int
            if entry != 0, codeLength <= bitCount {
                bitBuffer >>= UInt64(codeLength)
                bitCount -= codeLength
                symbol = Int(entry >> 4)
            } else {
                symbol = try decode(literals)
            }
            if symbol < 256 {
                try emit(UInt8(truncatingIfNeeded: symbol))
                continue
            }
            if symbol == 256 { return }
            let lengthIndex = symbol - 257
            guard lengthIndex < DeflateCodes.lengthBase.count else { throw Failure.damaged("length symbol \(symbol) is invalid") }
            let length = DeflateCodes.lengthBase[lengthIndex] + (try bits(DeflateCodes.lengthExtra[lengthIndex]))
            let distanceSymbol = try decode(distances)
            guard distanceSymbol < DeflateCodes.distanceBase.count else {
                throw Failure.damaged("distance symbol \(distanceSymbol) is invalid")
            }
            let distance = DeflateCodes.distanceBase[distanceSymbol] + (try bits(DeflateCodes.distanceExtra[distanceSymbol]))
            guard distance <= produced else {
                throw Failure.damaged("a back-reference reaches \(distance) bytes back, before the start of the data")
            }
            guard length <= limit - produced else { throw Failure.tooLarge }
            // The window holds the last 32 KiB produced (or all of it), and a distance is at most 32 KiB.
            let from = output + (count - distance)
            for index in 0..<length { output[count + index] = from[index] }
            count += length
            produced += length
            flushIfFull()
        }
    }

    private mutating func fixed() throws(Failure) {
        var lengths = [Int](repeating: 8, count: 288)
        for symbol in 144..<256 { lengths[symbol] = 9 }
        for symbol in 256..<280 { lengths[symbol] = 7 }
        let literals = Huffman(lengths: lengths[...], allowIncomplete: true)!
        let distances = Huffman(lengths: [Int](repeating: 5, count: 30)[...], allowIncomplete: true)!
        try codes(literals: literals, distances: distances)
    }

    private mutating func dynamic() throws(Failure) {
        let literalCount = try bits(5) + 257
        let distanceCount = try bits(5) + 1
        let codeLengthCount = try bits(4) + 4
        guard literalCount <= 286, distanceCount <= 30 else {
            throw Failure.damaged("a dynamic block declares \(literalCount) literal and \(distanceCount) distance codes")
        }
        var codeLengths = [Int](repeating: 0, count: 19)
        for index in 0..<codeLengthCount { codeLengths[Self.codeLengthOrder[index]] = try bits(3) }
        guard let lengthCode = Huffman(lengths: codeLengths[...], allowIncomplete: false) else {
            throw Failure.damaged("a dynamic block's code-length code is over-subscribed")
        }
        var lengths: [Int] = []
        while lengths.count < literalCount + distanceCount {
            let symbol = try decode(lengthCode)
            if symbol < 16 {
                lengths.append(symbol)
                continue
            }
            let (value, repeats): (Int, Int)
            switch symbol {
            case 16:
                guard let previous = lengths.last else { throw Failure.damaged("a dynamic block repeats a length before the first") }
                (value, repeats) = (previous, 3 + (try bits(2)))
            case 17: (value, repeats) = (0, 3 + (try bits(3)))
            default: (value, repeats) = (0, 11 + (try bits(7)))
            }
            guard lengths.count + repeats <= literalCount + distanceCount else {
                throw Failure.damaged("a dynamic block's code lengths overflow")
            }
            lengths.append(contentsOf: repeatElement(value, count: repeats))
        }
        guard lengths[256] != 0 else { throw Failure.damaged("a dynamic block has no end-of-block code") }
        guard let literals = Huffman(lengths: lengths[..<literalCount], allowIncomplete: false),
            let distances = Huffman(lengths: lengths[literalCount...], allowIncomplete: false)
        else {
            throw Failure.damaged("a dynamic block's literal or distance code is over-subscribed or incomplete")
        }
        try codes(literals: literals, distances: distances)
    }
}
