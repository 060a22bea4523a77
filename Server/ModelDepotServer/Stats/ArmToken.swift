import Crypto
import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// The arm a completed download counts for, as the server signed it into the manifest.
///
/// The manifest's download URL carries the arm that chose the version, with a MAC over the
/// blob's digest and the arm: `/v1/blobs/sha256/<hex>?arm=<arm>.<mac>`, `<arm>` percent-encoded
/// (`rule:r-1a2b3c4d` stays as it is) and `<mac>` the first 128 bits of
/// HMAC-SHA256(key, "<hex>\n<arm>") in base64url. The manifest is signed, so the token is part of
/// its signed bytes; it is made once per cached manifest, never per `304`.
///
/// The key is derived (HKDF-SHA256) from the online manifest signing key, which every replica
/// already shares (key files, or the PostgreSQL catalog's `signing_key`), so one replica checks
/// what another signed. A blob request whose URL has no token, a token that does not check, or
/// one made for another blob counts as ``CountedArm/unknown`` — the `Depot-Arm` header older
/// SDKs send is not read. So the arms counted are `unknown` and those the server handed out,
/// whatever devices send: counters and catalog rows cannot be multiplied by made-up arms.
enum ArmToken {
    /// The longest `arm` query value looked at; a longer one is not a token the server made.
    static let maximumLength = 256
    /// Bytes of the HMAC kept in a token.
    static let macLength = 16

    /// The secret tokens are made and checked with.
    struct Key: Sendable {
        let secret: SymmetricKey

        /// The key derived from an online manifest signing key.
        init(signingKey: Curve25519.Signing.PrivateKey) {
            secret = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: signingKey.rawRepresentation),
                info: Data("ModelDepot arm token v1".utf8), outputByteCount: 32)
        }

        /// The MAC of a download of blob `sha256` through `arm`: the first ``ArmToken/macLength``
        /// bytes of HMAC-SHA256 over `<sha256>\n<arm>`.
        func mac(arm: [UInt8], sha256: Substring) -> [UInt8] {
            var message = Array(sha256.utf8)
            message.append(UInt8(ascii: "\n"))
            message += arm
            return Array(HMAC<SHA256>.authenticationCode(for: message, using: secret).prefix(ArmToken.macLength))
        }
    }

    /// The value of the download URL's `arm` query item for blob `sha256` handed out through `arm`.
    static func make(arm: CountedArm, sha256: String, key: Key) -> String {
        let text = arm.stored
        let mac = TokenText.base64URL(key.mac(arm: Array(text.utf8), sha256: sha256[...]))
        return String(decoding: percentEncoded(text.utf8), as: UTF8.self) + "." + mac
    }

    /// The arm a download of blob `sha256` counts for: the one in the `arm` item of `query` (a
    /// request target's raw query: after its `?`, up to a `#`) when its MAC checks under one of
    /// `keys`, else ``CountedArm/unknown``.
    static func arm(inQuery query: Substring?, sha256: Substring, keys: [Key]) -> CountedArm {
        guard let query, let value = value(of: DeviceRoute.armQueryItem, in: query.utf8.prefix { $0 != UInt8(ascii: "#") }),
            value.count <= maximumLength,
            let dot = value.lastIndex(of: UInt8(ascii: ".")), let arm = percentDecoded(value[..<dot])
        else {
            return .unknown
        }
        guard let mac = TokenText.base64URLDecoded(value[value.index(after: dot)...]), mac.count == macLength else { return .unknown }
        for key in keys where TokenText.equalInConstantTime(key.mac(arm: arm, sha256: sha256), mac) {
            return CountedArm(stored: String(decoding: arm, as: UTF8.self))
        }
        return .unknown
    }

    /// The raw value of the first item named `name` in `query` (`name=value` items joined by `&`).
    private static func value(of name: String, in query: Substring.UTF8View) -> Substring.UTF8View? {
        var start = query.startIndex
        while start < query.endIndex {
            let end = query[start...].firstIndex(of: UInt8(ascii: "&")) ?? query.endIndex
            let item = query[start..<end]
            if item.starts(with: name.utf8) {
                let rest = item.dropFirst(name.utf8.count)
                if rest.first == UInt8(ascii: "=") { return rest.dropFirst() }
            }
            start = end < query.endIndex ? query.index(after: end) : end
        }
        return nil
    }

    /// Bytes that stay as they are in an arm: letters, digits and `-._~:`.
    private static func isKept(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: ":"):
            true
        default:
            false
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func percentEncoded(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var encoded: [UInt8] = []
        for byte in bytes {
            if isKept(byte) {
                encoded.append(byte)
            } else {
                encoded += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
            }
        }
        return encoded
    }

    /// The bytes of a percent-encoded text, or `nil` for a bad escape.
    private static func percentDecoded(_ text: Substring.UTF8View) -> [UInt8]? {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            index = text.index(after: index)
            guard byte == UInt8(ascii: "%") else {
                decoded.append(byte)
                continue
            }
            guard index < text.endIndex, let high = text[index].hexDigitValue else { return nil }
            index = text.index(after: index)
            guard index < text.endIndex, let low = text[index].hexDigitValue else { return nil }
            index = text.index(after: index)
            decoded.append(high << 4 | low)
        }
        return decoded
    }
}
