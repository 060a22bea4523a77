import Crypto
import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// What makes a device's outcomes count: the server's word that it handed this installation this
/// version of this model through this arm.
///
/// Every manifest answer (`200` and `304`) to a request with an installation id carries one in
/// `Depot-Exposure`: `<day>.<key>.<mac>`, `<day>` the days since 1970 when it was made, `<key>` 4
/// hex digits naming the key, and `<mac>` the first 128 bits of
/// HMAC-SHA256(key, "<model>\n<version>\n<arm>\n<installation>\n<day>") in base64url, the
/// installation id in lower case (as buckets read it). The arm is the one the rollout resolved
/// from the installation's bucket and the rule's ranges at that moment, so a token is that
/// resolution, signed. The SDK sends it with each event of that version and arm.
///
/// The key is derived (HKDF-SHA256) from the online manifest signing key, which every replica
/// shares, so any replica checks what another made. A token is accepted for ``acceptedDays``
/// days: a device holds an event at most ``OutcomeBatch/maximumAge``. A token of a key the
/// server no longer holds (one rotated away before a restart) cannot be checked: its events are
/// kept but not counted, as those without a token are, rather than lost.
enum ExposureToken {
    static let macLength = 16
    /// How many days after the day it was made a token is accepted.
    static let acceptedDays = 8
    /// The longest token looked at.
    static let maximumLength = 64

    struct Key: Sendable {
        /// The HMAC with the key already taken in, copied for each token (a copy skips hashing
        /// the key's two pads again).
        let prepared: HMAC<SHA256>
        /// 4 hex digits naming the key in its tokens (of the SHA-256 of the secret).
        let hint: String

        init(signingKey: Curve25519.Signing.PrivateKey) {
            let secret = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: signingKey.rawRepresentation),
                info: Data("ModelDepot exposure token v1".utf8), outputByteCount: 32)
            prepared = HMAC<SHA256>(key: secret)
            hint = secret.withUnsafeBytes { Array(SHA256.hash(data: $0).prefix(2)).hex }
        }

        func mac(model: ModelName, version: Int, arm: String, installation: String, day: Int) -> [UInt8] {
            var message: [UInt8] = []
            message.reserveCapacity(model.rawValue.utf8.count + arm.utf8.count + installation.utf8.count + 48)
            message += model.rawValue.utf8
            message.append(UInt8(ascii: "\n"))
            message += String(version).utf8
            message.append(UInt8(ascii: "\n"))
            message += arm.utf8
            message.append(UInt8(ascii: "\n"))
            message += InstallationID.lowercasedUTF8(installation)
            message.append(UInt8(ascii: "\n"))
            message += String(day).utf8
            var hmac = prepared
            hmac.update(data: message)
            return Array(hmac.finalize().prefix(ExposureToken.macLength))
        }
    }

    /// The day (since 1970) of `date`.
    static func day(_ date: Date) -> Int { Int((date.timeIntervalSince1970 / 86_400).rounded(.down)) }

    /// The token for `installation` given `version` of `model` through `arm` on `day`.
    static func make(model: ModelName, version: Int, arm: CountedArm, installation: String, day: Int, key: Key) -> String {
        var text = Array("\(day).\(key.hint).".utf8)
        TokenText.appendBase64URL(key.mac(model: model, version: version, arm: arm.stored, installation: installation, day: day), to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether `token` reads as one made on `today` under `key`, its MAC unchecked: a device that
    /// sends one with a manifest check needs no new one with a `304`. Checking nothing more is
    /// safe: a device that sends another's token only goes without its own.
    static func isMadeToday(_ token: some Sequence<UInt8>, today: Int, key: Key) -> Bool {
        var bytes = token.makeIterator()
        var day = 0
        var digits = 0
        while let byte = bytes.next(), byte != UInt8(ascii: ".") {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte), digits < 9 else { return false }
            day = day * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        guard digits > 0, day == today else { return false }
        for expected in key.hint.utf8 {
            guard bytes.next() == expected else { return false }
        }
        return bytes.next() == UInt8(ascii: ".")
    }

    /// Checks `token` for an event of `version` through `arm` from `installation`.
    /// - Parameter today: The server's day: a token from more than ``acceptedDays`` before, or
    ///   from more than a day later (a replica's clock ahead across midnight), is refused.
    /// - Returns: `true` when the token checks under one of `keys`; `false` for a well-formed token
    ///   of a key not among them, whose events are kept uncounted.
    /// - Throws: ``DepotError``: `invalid_exposure` for text that is not a token, or a token that
    ///   names one of `keys` and does not check under it; `expired_exposure` for one that checks
    ///   but is too old.
    static func check(
        _ token: String, model: ModelName, version: Int, arm: String, installation: String, today: Int, keys: [Key]
    ) throws(DepotError) -> Bool {
        let parts = token.utf8.count <= maximumLength ? token.split(separator: ".", omittingEmptySubsequences: false) : []
        guard parts.count == 3, let day = Int(parts[0]), day >= 0, String(day) == parts[0], parts[1].utf8.count == 4,
            parts[1].utf8.allSatisfy({
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            }),
            let mac = TokenText.base64URLDecoded(parts[2].utf8), mac.count == macLength
        else { throw invalid(token, model, version, arm) }
        guard let key = keys.first(where: { $0.hint == parts[1] }) else { return false }
        guard TokenText.equalInConstantTime(key.mac(model: model, version: version, arm: arm, installation: installation, day: day), mac)
        else { throw invalid(token, model, version, arm) }
        guard day <= today + 1, today - day <= acceptedDays else {
            throw DepotError(
                .expiredExposure,
                "exposure of day \(day) is outside the \(acceptedDays) days before the server's day \(today); the SDK gets a new one with its next manifest check"
            )
        }
        return true
    }

    private static func invalid(_ token: String, _ model: ModelName, _ version: Int, _ arm: String) -> DepotError {
        DepotError(
            .invalidExposure,
            "exposure '\(token.prefix(80))' is not one this server made for this installation, model '\(model)', version \(version) and arm '\(arm.prefix(80))'; send the Depot-Exposure value of the manifest answer that gave the version"
        )
    }
}
