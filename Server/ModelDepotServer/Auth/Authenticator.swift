import Foundation
import ModelDepotShared

/// The one place a request proves who sent it — a bearer secret (the API, and the devices' fast
/// path), a console sign-in, or a console session cookie — with one throttle
/// (``AuthenticationThrottle``, per client address and per key id) and one failure metric.
/// Every failure counts, whatever the route; a success from an address ends its count.
struct Authenticator: Sendable {
    let keys: AccessKeyCache
    let throttle: AuthenticationThrottle
    let metrics: ServerMetrics
    let sessions: ConsoleSessions
    /// Whose word on the client's address and scheme is taken.
    let proxies: TrustedProxies

    /// The key of an `Authorization: Bearer <secret>` header.
    /// - Throws: ``ThrottledError`` while the address or the key id must wait; ``DepotError``
    ///   (`unauthorized`) for a missing, malformed, unknown or revoked secret.
    func key(authorization header: String?, client: String?) async throws -> AccessKey {
        try checkThrottle(client)
        guard let header else {
            throw failed(
                client, keyID: nil,
                DepotError(.unauthorized, "No API key: send 'Authorization: Bearer <secret>' (the CLI reads --token or DEPOT_TOKEN)."))
        }
        guard let secret = Self.bearerSecret(header) else {
            throw failed(client, keyID: nil, DepotError(.unauthorized, "The Authorization header is not 'Bearer <secret>'."))
        }
        return try await key(secret: String(secret), client: client)
    }

    /// The key of a bearer header when it is cached and right; `nil` leaves the request to the
    /// router (which answers with ``key(authorization:client:)``, failures included).
    func cachedKey(authorization header: String, client: @autoclosure () -> String?) -> (key: AccessKey, generation: Int)? {
        guard throttle.wait(address: client()) == nil, let secret = Self.bearerSecret(header),
            let found = keys.cachedKey(secret)
        else { return nil }
        throttle.succeeded(address: client())
        return found
    }

    /// Signs in to the console with an admin token.
    /// - Returns: The new session and the token's key.
    /// - Throws: ``ThrottledError``; ``DepotError`` `unauthorized` for a token that is not a working
    ///   key, `forbidden` for an app key.
    func signIn(token: String, client: String?) async throws -> (session: ConsoleSession, key: AccessKey) {
        try checkThrottle(client)
        let key = try await key(secret: token, client: client)
        guard key.kind == .admin else {
            throw DepotError(.forbidden, "Key '\(key.id)' is an app key; the console needs an admin token.")
        }
        return (try await sessions.begin(for: key), key)
    }

    /// The console session a `depot_console` cookie names, with its admin key; `nil` without a
    /// cookie.
    /// - Throws: ``ThrottledError`` while the address must wait; ``DepotError`` (`unauthorized`)
    ///   for a cookie that names no live session of a working admin key, counted as a failure.
    func session(cookie: Substring?, client: String?) async throws -> (session: ConsoleSession, key: AccessKey)? {
        guard let cookie else { return nil }
        try checkThrottle(client)
        guard let session = ConsoleSession(cookieValue: cookie), let keyID = try await sessions.keyID(of: session),
            let key = try await keys.workingKey(id: keyID), key.kind == .admin
        else {
            throw failed(
                client, keyID: nil,
                DepotError(
                    .unauthorized,
                    "Your console session has ended (signed out, unused for too long, past its lifetime, or its token revoked) or the cookie is not one this server made. Sign in again."
                ))
        }
        throttle.succeeded(address: client)
        return (session, key)
    }

    /// The secret of an `Authorization: Bearer <secret>` header.
    static func bearerSecret(_ header: String) -> Substring? {
        let scheme = "bearer ".utf8
        guard header.utf8.count > scheme.count, zip(header.utf8, scheme).allSatisfy({ $0 | 0x20 == $1 }) else { return nil }
        let secret = header.utf8.dropFirst(scheme.count).drop { $0 == UInt8(ascii: " ") }
        return secret.isEmpty ? nil : Substring(secret)
    }

    private func key(secret: String, client: String?) async throws -> AccessKey {
        let keyID = AccessKeySecret(text: secret).embeddedID
        do {
            let key = try await keys.authenticate(secret)
            throttle.succeeded(address: client)
            return key
        } catch let error as DepotError where error.code == .unauthorized {
            let error = failed(client, keyID: keyID, error)
            if let keyID, let wait = throttle.wait(keyID: keyID) { throw refused(wait) }
            throw error
        }
    }

    private func checkThrottle(_ client: String?) throws {
        if let wait = throttle.wait(address: client) { throw refused(wait) }
    }

    private func failed(_ client: String?, keyID: String?, _ error: DepotError) -> DepotError {
        metrics.recordAuthenticationFailure()
        throttle.failed(address: client, keyID: keyID)
        return error
    }

    private func refused(_ wait: Duration) -> ThrottledError {
        metrics.recordThrottled()
        return ThrottledError(wait: wait)
    }
}
