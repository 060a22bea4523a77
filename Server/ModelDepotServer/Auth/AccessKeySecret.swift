import Crypto
import Foundation
import ModelDepotShared

/// The secret of a key, as sent in `Authorization: Bearer <secret>`:
/// `depot_<12 hex id>_<64 hex random>`. Only its SHA-256 is stored.
struct AccessKeySecret: Sendable {
    let text: String

    /// A new random secret with a new id.
    static func generate() -> AccessKeySecret {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<6).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let random = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return AccessKeySecret(text: "depot_\(id.hex)_\(random.hex)")
    }

    /// The key id: the one inside a generated secret, or one derived from the hash of any
    /// other text (an operator's `DEPOT_ADMIN_TOKEN`).
    var id: String {
        let parts = text.split(separator: "_", omittingEmptySubsequences: false)
        if parts.count == 3, parts[0] == "depot", parts[1].count == 12, parts[2].count == 64,
           (parts[1] + parts[2]).allSatisfy(\.isHexDigit) {
            return String(parts[1])
        }
        return "t" + String(hash.hex.prefix(11))
    }

    var hash: [UInt8] { Array(SHA256.hash(data: Data(text.utf8))) }

    /// Compares two hashes in time that does not depend on where they differ.
    static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }
}

extension Sequence<UInt8> {
    var hex: String { map { String($0, radix: 16).leftPadded(to: 2) }.joined() }
}

extension String {
    func leftPadded(to length: Int) -> String { count >= length ? self : String(repeating: "0", count: length - count) + self }
}
