import Foundation
import ModelDepotShared

/// How hard an admin token an operator chose (`DEPOT_ADMIN_TOKEN`, `--admin-token-file`) is to
/// guess: its length times the bits per character of the classes it draws from (lower-case
/// letters, upper-case letters, digits, anything else), at least 128 bits — 22 characters of
/// mixed letters and digits, 32 hex digits, or a generated `depot_…` token.
public enum AdminTokenStrength {
    public static let minimumBits = 128.0

    /// The estimate, in bits.
    public static func bits(_ token: String) -> Double {
        let scalars = token.unicodeScalars
        var alphabet = 0
        if scalars.contains(where: { ("a"..."z").contains($0) }) { alphabet += 26 }
        if scalars.contains(where: { ("A"..."Z").contains($0) }) { alphabet += 26 }
        if scalars.contains(where: { ("0"..."9").contains($0) }) { alphabet += 10 }
        if scalars.contains(where: { !("a"..."z").contains($0) && !("A"..."Z").contains($0) && !("0"..."9").contains($0) }) {
            alphabet += 32
        }
        return alphabet == 0 ? 0 : Double(scalars.count) * log2(Double(alphabet))
    }

    /// Refuses a token under ``minimumBits``.
    /// - Throws: ``DepotError`` (`bad_request`) saying how strong it is and how to make one.
    public static func check(_ token: String) throws(DepotError) {
        let estimate = bits(token)
        guard estimate >= minimumBits else {
            throw DepotError(
                .badRequest,
                "The admin token is too easy to guess: about \(Int(estimate)) bits, at least \(Int(minimumBits)) are needed (22 characters of mixed letters and digits, or 32 hex digits: 'openssl rand -hex 16'). Leave it out and the server generates one."
            )
        }
    }
}
