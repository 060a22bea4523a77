import Crypto
import Foundation
import ModelDepotShared

/// The secret of a key, as sent in `Authorization: Bearer <secret>`:
/// `depot_<12 hex id>_<64 hex random>`. Only its SHA-256 is stored.
struct AccessKeySecret: Sendable {
    let text: String
    /// The key id inside a generated secret; `nil` for any other text (an operator's
    /// `DEPOT_ADMIN_TOKEN`), which is looked up by its hash instead.
    let embeddedID: String?
    /// The SHA-256 of the secret: what the catalog stores.
    let hash: [UInt8]

    init(text: String) {
        self.text = text
        let bytes = Array(text.utf8)
        hash = Array(SHA256.hash(data: bytes))
        embeddedID = Self.embeddedID(bytes)
    }

    /// The id a new key with this secret gets: the embedded one, or a random one (`t` and 11
    /// hex digits) that says nothing about the secret.
    func newKeyID() -> String {
        embeddedID ?? "t" + String((0..<6).map { _ in UInt8.random(in: 0...255) }.hex.prefix(11))
    }

    /// A new random secret with a new id.
    static func generate() -> AccessKeySecret {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<6).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let random = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return AccessKeySecret(text: "depot_\(id.hex)_\(random.hex)")
    }

    /// The id of `depot_<12 hex>_<64 hex>`, or `nil` for any other text.
    private static func embeddedID(_ bytes: [UInt8]) -> String? {
        guard bytes.count == 83, bytes[0..<6].elementsEqual("depot_".utf8), bytes[18] == UInt8(ascii: "_"),
            bytes[6..<18].allSatisfy(isLowerHex), bytes[19...].allSatisfy(isLowerHex)
        else { return nil }
        return String(decoding: bytes[6..<18], as: UTF8.self)
    }

    private static func isLowerHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    /// Compares two hashes in time that does not depend on where they differ.
    static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }
}

extension Sequence<UInt8> {
    var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0f)]] }, as: UTF8.self)
    }
}
