import Foundation

/// The text of the MACs the server hands out in tokens (``ArmToken``, ``ExposureToken``):
/// unpadded base64url, compared in constant time.
enum TokenText {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// `bytes` as unpadded base64url (RFC 4648 §5), appended to `text`: on the manifest path, per
    /// request, so without Foundation's encoder and string replacing.
    static func appendBase64URL(_ bytes: some Collection<UInt8>, to text: inout [UInt8]) {
        var group = 0, bits = 0
        for byte in bytes {
            group = group << 8 | Int(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                text.append(alphabet[(group >> bits) & 63])
            }
            group &= (1 << bits) - 1
        }
        if bits > 0 { text.append(alphabet[(group << (6 - bits)) & 63]) }
    }

    /// `bytes` as unpadded base64url (RFC 4648 §5).
    static func base64URL(_ bytes: some Collection<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity((bytes.count * 4 + 2) / 3)
        appendBase64URL(bytes, to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes of unpadded base64url text (RFC 4648 §5), or `nil` for a character outside it
    /// or a text that is not the canonical encoding of its bytes.
    static func base64URLDecoded(_ text: some Sequence<UInt8>) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.underestimatedCount * 3 / 4)
        var group = 0, bits = 0
        for character in text {
            let value: Int
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = Int(character - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = Int(character - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = Int(character - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "_"): value = 63
            default: return nil
            }
            group = group << 6 | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: group >> bits))
                group &= (1 << bits) - 1
            }
        }
        // Bits left over must be zero: one text per byte string.
        return group == 0 ? bytes : nil
    }

    /// Whether two byte strings are equal, in a time that depends on their lengths only.
    static func equalInConstantTime(_ expected: [UInt8], _ given: [UInt8]) -> Bool {
        guard expected.count == given.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(expected, given) { difference |= left ^ right }
        return difference == 0
    }
}
