import Crypto
import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// What makes a device's outcomes count: the server's word that it handed this installation this
/// version of this model through this arm.
///
/// Every manifest answer (`200` and `304`) to a request with an installation id carries one in
/// `Depot-Exposure`: `<day>.<mac>`, `<day>` the days since 1970 when it was made and `<mac>` the
/// first 128 bits of HMAC-SHA256(key, "<model>\n<version>\n<arm>\n<installation>\n<day>") in
/// base64url, the installation id in lower case (as buckets read it). The arm is the one the
/// rollout resolved from the installation's bucket and the rule's ranges at that moment, so a
/// token is that resolution, signed. The SDK sends it with each event of that version and arm.
///
/// The key is derived (HKDF-SHA256) from the online manifest signing key, which every replica
/// shares, so any replica checks what another made. A token is accepted for
/// ``acceptedDays`` days: a device holds an event at most ``OutcomeBatch/maximumAge``.
enum ExposureToken {
    static let macLength = 16
    /// How many days after the day it was made a token is accepted.
    static let acceptedDays = 8
    /// The longest token looked at.
    static let maximumLength = 64

    struct Key: Sendable {
        let secret: SymmetricKey
        /// The key client networks are named with (``ClientNetwork``).
        let networkSecret: SymmetricKey

        init(signingKey: Curve25519.Signing.PrivateKey) {
            func derived(_ info: String) -> SymmetricKey {
                HKDF<SHA256>.deriveKey(
                    inputKeyMaterial: SymmetricKey(data: signingKey.rawRepresentation), info: Data(info.utf8), outputByteCount: 32)
            }
            secret = derived("ModelDepot exposure token v1")
            networkSecret = derived("ModelDepot client network v1")
        }

        func mac(model: ModelName, version: Int, arm: String, installation: String, day: Int) -> [UInt8] {
            var message = Array(model.rawValue.utf8)
            message.append(UInt8(ascii: "\n"))
            message += String(version).utf8
            message.append(UInt8(ascii: "\n"))
            message += arm.utf8
            message.append(UInt8(ascii: "\n"))
            message += installation.lowercased().utf8
            message.append(UInt8(ascii: "\n"))
            message += String(day).utf8
            return Array(HMAC<SHA256>.authenticationCode(for: message, using: secret).prefix(ExposureToken.macLength))
        }
    }

    /// The day (since 1970) of `date`.
    static func day(_ date: Date) -> Int { Int((date.timeIntervalSince1970 / 86_400).rounded(.down)) }

    /// The token for `installation` given `version` of `model` through `arm` on `day`.
    static func make(model: ModelName, version: Int, arm: CountedArm, installation: String, day: Int, key: Key) -> String {
        "\(day)." + TokenText.base64URL(key.mac(model: model, version: version, arm: arm.stored, installation: installation, day: day))
    }

    /// Checks `token` for an event of `version` through `arm` from `installation`.
    /// - Parameter today: The server's day: a token from more than ``acceptedDays`` before, or
    ///   from a later day, is refused.
    /// - Throws: ``DepotError``: `invalid_exposure` for a token that does not check under any of
    ///   `keys` (or is not a token), `expired_exposure` for one that checks but is too old.
    static func check(
        _ token: String, model: ModelName, version: Int, arm: String, installation: String, today: Int, keys: [Key]
    ) throws(DepotError) {
        let text = token.utf8
        guard text.count <= maximumLength, let dot = text.firstIndex(of: UInt8(ascii: ".")),
            let day = Int(String(decoding: text[..<dot], as: UTF8.self)), day >= 0,
            String(day).utf8.count == text.distance(from: text.startIndex, to: dot),
            let mac = TokenText.base64URLDecoded(text[text.index(after: dot)...]), mac.count == macLength,
            keys.contains(where: {
                TokenText.equalInConstantTime($0.mac(model: model, version: version, arm: arm, installation: installation, day: day), mac)
            })
        else {
            throw DepotError(
                .invalidExposure,
                "exposure '\(token.prefix(80))' is not one this server made for this installation, model '\(model)', version \(version) and arm '\(arm.prefix(80))'; send the Depot-Exposure value of the manifest answer that gave the version"
            )
        }
        guard day <= today, today - day <= acceptedDays else {
            throw DepotError(
                .expiredExposure,
                "exposure of day \(day) is outside the \(acceptedDays) days before the server's day \(today); the SDK gets a new one with its next manifest check"
            )
        }
    }
}
