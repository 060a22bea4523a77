import ModelDepotShared

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads an ``OutcomeBatch`` from JSON without `JSONDecoder`: only the plain JSON the SDK writes
/// is read here — the batch's and each event's known fields once each, strings of printable ASCII
/// without escapes, integers of at most 18 digits, numbers of at most 32 characters. Anything
/// else, valid JSON or not, is `nil`: ``ExperimentService/accept(_:of:key:from:)`` then decodes it with
/// `JSONDecoder` (whose error names what is wrong). For every body read here,
/// `JSONDecoder` reads the same batch (tested, and fuzzed by `scripts/fuzz outcome-batch-json`).
enum OutcomeBatchReader {
    static func read(_ bytes: UnsafeRawBufferPointer) -> OutcomeBatch? {
        var reader = Reader(bytes: bytes)
        guard let batch = reader.batch() else { return nil }
        reader.skipWhitespace()
        return reader.offset == bytes.count ? batch : nil
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        mutating func batch() -> OutcomeBatch? {
            var id: String?, installation: String?, events: [OutcomeBatch.Event]?, dropped: Int?, exposures: [OutcomeBatch.Exposure]?
            let complete = object { reader, key in
                switch key {
                case "batch" where id == nil:
                    id = reader.string()
                    return id != nil
                case "installation" where installation == nil:
                    installation = reader.string()
                    return installation != nil
                case "dropped" where dropped == nil:
                    dropped = reader.integer()
                    return dropped != nil
                case "events" where events == nil:
                    events = reader.list { read, before in read.event(after: before.last) }
                    return events != nil
                case "exposures" where exposures == nil:
                    exposures = reader.list { read, _ in read.exposure() }
                    return exposures != nil
                default: return false
                }
            }
            guard complete, let id, let installation, let events, let dropped else { return nil }
            return OutcomeBatch(batch: id, installation: installation, events: events, dropped: dropped, exposures: exposures ?? [])
        }

        /// `[element, …]` of at most ``OutcomeBatch/maximumEvents`` elements, each read by
        /// `element` from the reader and the elements before it.
        private mutating func list<Element>(_ element: (inout Reader, [Element]) -> Element?) -> [Element]? {
            guard take(UInt8(ascii: "[")) else { return nil }
            var elements: [Element] = []
            if take(UInt8(ascii: "]")) { return elements }
            repeat {
                guard elements.count < OutcomeBatch.maximumEvents, let next = element(&self, elements) else { return nil }
                elements.append(next)
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "]")) ? elements : nil
        }

        private mutating func exposure() -> OutcomeBatch.Exposure? {
            var version: Int?, arm: String?, token: String?
            let complete = object { reader, key in
                switch key {
                case "version" where version == nil:
                    version = reader.integer()
                    return version != nil
                case "arm" where arm == nil:
                    arm = reader.string()
                    return arm != nil
                case "token" where token == nil:
                    token = reader.string()
                    return token != nil
                default: return false
                }
            }
            guard complete, let version, let arm, let token else { return nil }
            return OutcomeBatch.Exposure(version: version, arm: arm, token: token)
        }

        /// An event; its arm shares the text of `previous`'s when they are the same (the SDK
        /// sends one arm for most of a batch), so that it is not made again.
        private mutating func event(after previous: OutcomeBatch.Event?) -> OutcomeBatch.Event? {
            var metric: String?, version: Int?, arm: String?, at: Int?
            var value: Double??, code: String??, count: Int??
            let complete = object { reader, key in
                switch key {
                case "metric" where metric == nil:
                    metric = reader.string()
                    return metric != nil
                case "version" where version == nil:
                    version = reader.integer()
                    return version != nil
                case "arm" where arm == nil:
                    arm = reader.string(reusing: previous?.arm)
                    return arm != nil
                case "at" where at == nil:
                    at = reader.integer()
                    return at != nil
                case "value" where value == nil:
                    value = reader.nullable { $0.number() }
                    return value != nil
                case "code" where code == nil:
                    code = reader.nullable { $0.string() }
                    return code != nil
                case "count" where count == nil:
                    count = reader.nullable { $0.integer() }
                    return count != nil
                default: return false
                }
            }
            guard complete, let metric, let version, let arm, let at else { return nil }
            return OutcomeBatch.Event(
                metric: metric, version: version, arm: arm, at: at, value: value ?? nil, code: code ?? nil, count: count ?? nil)
        }

        /// `{"key": value, …}`, each value read by `member`, which returns `false` for a key it
        /// does not take (unknown, or seen before).
        private mutating func object(_ member: (inout Reader, String) -> Bool) -> Bool {
            guard take(UInt8(ascii: "{")) else { return false }
            if take(UInt8(ascii: "}")) { return true }
            repeat {
                guard let key = string(), take(UInt8(ascii: ":")) else { return false }
                skipWhitespace()
                guard member(&self, key) else { return false }
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "}"))
        }

        /// `null` (`.some(nil)`) or what `read` reads.
        mutating func nullable<T>(_ read: (inout Reader) -> T?) -> T?? {
            if bytes.count - offset >= 4, bytes[offset] == UInt8(ascii: "n"), bytes[offset + 1] == UInt8(ascii: "u"),
                bytes[offset + 2] == UInt8(ascii: "l"), bytes[offset + 3] == UInt8(ascii: "l")
            {
                offset += 4
                return .some(nil)
            }
            return read(&self).map { .some($0) }
        }

        /// A string of printable ASCII without escapes: `known` when it has the same bytes and is
        /// too long to be stored inline (more than 15 bytes; a shorter one is made without an
        /// allocation, for less than the comparison costs). The closing quote is found with
        /// `memchr`, then the bytes before it are checked.
        mutating func string(reusing known: String? = nil) -> String? {
            guard take(UInt8(ascii: "\"")), offset < bytes.count, let base = bytes.baseAddress,
                let quote = memchr(base + offset, Int32(UInt8(ascii: "\"")), bytes.count - offset)
            else { return nil }
            let end = base.distance(to: UnsafeRawPointer(quote))
            let text = UnsafeRawBufferPointer(rebasing: bytes[offset..<end])
            for byte in text where byte < 0x20 || byte >= 0x7F || byte == UInt8(ascii: "\\") { return nil }
            offset = end + 1
            if text.count > 15, let known, text.spells(known) { return known }
            return String(decoding: text, as: UTF8.self)
        }

        /// An integer of 1 to 18 digits, optionally negative, without leading zeros.
        mutating func integer() -> Int? {
            let negative = offset < bytes.count && bytes[offset] == UInt8(ascii: "-")
            let start = negative ? offset + 1 : offset
            var end = start, value = 0
            while end < bytes.count, end - start < 18, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end]) {
                value = value * 10 + Int(bytes[end] - UInt8(ascii: "0"))
                end += 1
            }
            guard (1...18).contains(end - start), bytes[start] != UInt8(ascii: "0") || end - start == 1, !isNumberCharacter(at: end),
                !(negative && value == 0)
            else { return nil }
            offset = end
            return negative ? -value : value
        }

        /// A JSON number of at most 32 characters whose value is finite and 0 or at least 1e-300 in size.
        mutating func number() -> Double? {
            var end = offset
            let negative = end < bytes.count && bytes[end] == UInt8(ascii: "-")
            if negative { end += 1 }
            guard let integral = digits(from: end), bytes[end] != UInt8(ascii: "0") || integral == end + 1 else { return nil }
            let integralDigits = integral - end
            end = integral
            var fractionDigits = 0
            if end < bytes.count, bytes[end] == UInt8(ascii: ".") {
                guard let fraction = digits(from: end + 1) else { return nil }
                fractionDigits = fraction - end - 1
                end = fraction
            }
            var exact = integralDigits + fractionDigits <= 15
            if end < bytes.count, bytes[end] | 0x20 == UInt8(ascii: "e") {
                exact = false
                end += 1
                if end < bytes.count, bytes[end] == UInt8(ascii: "+") || bytes[end] == UInt8(ascii: "-") { end += 1 }
                guard let exponent = digits(from: end) else { return nil }
                end = exponent
            }
            guard end - offset <= 32,
                let value = exact
                    ? decimal(offset..<end, negative: negative, fractionDigits: fractionDigits)
                    : Double(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<end]), as: UTF8.self))
            else { return nil }
            guard value.isFinite, value == 0 ? !hasNonZeroDigit(offset..<end) : abs(value) >= 1e-300 else { return nil }
            offset = end
            return value
        }

        /// A number of at most 15 digits without an exponent, as `Double(String)` reads it: its
        /// digits and the power of ten are exact doubles, and one division rounds correctly.
        private func decimal(_ range: Range<Int>, negative: Bool, fractionDigits: Int) -> Double {
            var digits = 0
            for index in range where (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                digits = digits * 10 + Int(bytes[index] - UInt8(ascii: "0"))
            }
            let value = Double(digits) / Self.powersOfTen[fractionDigits]
            return negative ? -value : value
        }

        /// 1e0 to 1e15, each exact.
        private static let powersOfTen: [Double] = (0...15).map { (0..<$0).reduce(1.0) { power, _ in power * 10 } }

        /// The end of one or more digits starting at `start`, or `nil`.
        private func digits(from start: Int) -> Int? {
            var end = start
            while end < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end]) { end += 1 }
            return end > start ? end : nil
        }

        /// Whether the mantissa (before any exponent) has a digit other than 0.
        private func hasNonZeroDigit(_ range: Range<Int>) -> Bool {
            for index in range {
                if bytes[index] | 0x20 == UInt8(ascii: "e") { return false }
                if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(bytes[index]) { return true }
            }
            return false
        }

        private func isNumberCharacter(at index: Int) -> Bool {
            guard index < bytes.count else { return false }
            let byte = bytes[index]
            return (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte | 0x20 == UInt8(ascii: "e")
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
        }

        /// Skips whitespace, then takes `byte` if it comes next.
        private mutating func take(_ byte: UInt8) -> Bool {
            skipWhitespace()
            guard offset < bytes.count, bytes[offset] == byte else { return false }
            offset += 1
            return true
        }

        mutating func skipWhitespace() {
            while offset < bytes.count, bytes[offset] == 0x20 || bytes[offset] == 0x0A || bytes[offset] == 0x0D || bytes[offset] == 0x09 {
                offset += 1
            }
        }
    }
}
