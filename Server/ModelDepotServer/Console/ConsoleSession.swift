import Crypto
import Foundation
import ModelDepotShared

/// A console sign-in. The `HttpOnly`, `SameSite=Strict` cookie holds only a random id (256 bits,
/// 64 hex digits); the catalog keeps the id's SHA-256 with the admin key that signed in (see
/// ``ConsoleSessions``), so a copy of the database signs nobody in, every replica sees the same
/// sessions, and signing out or revoking the key ends them.
struct ConsoleSession: Sendable, Hashable {
    static let cookieName = "depot_console"

    /// The cookie's value.
    let id: String

    /// A new session id from the system's secure random source.
    static func generate() -> ConsoleSession {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<4).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64) { Array($0) } }
        return ConsoleSession(validID: bytes.map { String(format: "%02x", $0) }.joined())
    }

    /// The session a cookie names, or `nil` when its value is not 64 lower-case hex digits.
    init?(cookieValue: some StringProtocol) {
        guard cookieValue.utf8.count == 64,
            cookieValue.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else { return nil }
        self.init(validID: String(cookieValue))
    }

    private init(validID: String) {
        id = validID
    }

    /// What the catalog stores instead of the id.
    var storedID: String { SHA256.hash(data: Data(id.utf8)).hex }

    /// The CSRF token of this session's forms: derived from the id, which only the browser and
    /// nobody reading the catalog has.
    var csrfToken: String { SHA256.hash(data: Data("csrf|\(id)".utf8)).hex }

    /// Whether a form's CSRF field is this session's.
    func accepts(csrf: String?) -> Bool {
        guard let csrf else { return false }
        return AccessKeySecret.constantTimeEqual(Array(csrf.utf8), Array(csrfToken.utf8))
    }

    /// The value of the `depot_console` cookie in `Cookie` header values (`name=value` pairs
    /// separated by `;`), or `nil`. Any bytes are read without a trap; the first pair with the
    /// name counts.
    static func cookieValue(inHeaders headers: [String]) -> Substring? {
        for header in headers {
            for pair in header.split(separator: ";") {
                let pair = pair.drop { $0 == " " || $0 == "\t" }
                guard let equals = pair.firstIndex(of: "="), pair[..<equals] == cookieName else { continue }
                var value = pair[pair.index(after: equals)...]
                while value.last == " " || value.last == "\t" { value.removeLast() }
                if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
                return value
            }
        }
        return nil
    }
}
