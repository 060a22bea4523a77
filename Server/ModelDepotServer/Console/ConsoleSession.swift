import Crypto
import Foundation
import ModelDepotShared

/// A console sign-in: the admin token, kept in an `HttpOnly`, `SameSite=Strict` cookie (never in
/// a URL or in script-readable storage) with its expiry, and the CSRF token every form of the
/// session carries. Both are MACs keyed by a hash of the token, so any replica checks them
/// without shared state, and neither can be made without the token.
struct ConsoleSession: Sendable {
    static let cookieName = "depot_console"
    /// How long a sign-in lasts.
    static let lifetime: TimeInterval = 8 * 3600

    let token: String
    let expires: Date

    init(token: String, expires: Date) {
        self.token = token
        self.expires = Date(timeIntervalSince1970: expires.timeIntervalSince1970.rounded(.down))
    }

    /// Reads the cookie's value: `<expiry>.<mac>.<token>`.
    /// - Returns: The session, or `nil` when the value is malformed, altered or expired.
    init?(cookie: String, now: Date) {
        let parts = cookie.split(separator: ".", maxSplits: 2).map(String.init)
        guard parts.count == 3, let seconds = Int(parts[0]) else { return nil }
        let session = ConsoleSession(token: parts[2], expires: Date(timeIntervalSince1970: TimeInterval(seconds)))
        guard session.expires > now, Self.equal(session.mac("session"), parts[1]) else { return nil }
        self = session
    }

    /// The cookie's value.
    var cookieValue: String { "\(Int(expires.timeIntervalSince1970)).\(mac("session")).\(token)" }

    /// The CSRF token of this session's forms.
    var csrfToken: String { mac("csrf") }

    /// Whether a form's CSRF field is this session's.
    func accepts(csrf: String?) -> Bool { csrf.map { Self.equal($0, csrfToken) } ?? false }

    private func mac(_ purpose: String) -> String {
        let key = SymmetricKey(data: SHA256.hash(data: Data(token.utf8)))
        let code = HMAC<SHA256>.authenticationCode(for: Data("\(purpose)|\(Int(expires.timeIntervalSince1970))".utf8), using: key)
        return Data(code).map { String(format: "%02x", $0) }.joined()
    }

    private static func equal(_ lhs: String, _ rhs: String) -> Bool {
        AccessKeySecret.constantTimeEqual(Array(lhs.utf8), Array(rhs.utf8))
    }
}
