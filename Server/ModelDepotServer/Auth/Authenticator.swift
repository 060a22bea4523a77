import Foundation
import ModelDepotShared

/// The one place a request proves who sent it — a bearer secret (the API, and the devices' fast
/// path), a console sign-in, or a console session cookie — with one throttle
/// (``AuthenticationThrottle``, per client address and scope, and per key id) and one failure
/// metric. Every failure counts, in the scope of its route; a valid generated secret is never
/// refused for its address.
struct Authenticator: Sendable {
    let keys: AccessKeyCache
    let throttle: AuthenticationThrottle
    let metrics: ServerMetrics
    let sessions: ConsoleSessions
    /// Whose word on the client's address and scheme is taken.
    let proxies: TrustedProxies

    /// The key of an `Authorization: Bearer <secret>` header on a route of `scope`.
    /// - Throws: ``ThrottledError`` while the address (for anything but a valid generated secret)
    ///   or the key id must wait; ``DepotError`` (`unauthorized`) for a missing, malformed,
    ///   unknown or revoked secret.
    func key(authorization header: String?, client: String?, scope: AuthenticationThrottle.Scope) async throws -> AccessKey {
        guard let header else {
            try checkThrottle(client, scope)
            throw failed(
                client, keyID: nil, scope,
                DepotError(.unauthorized, "No API key: send 'Authorization: Bearer <secret>' (the CLI reads --token or DEPOT_TOKEN)."))
        }
        guard let secret = Self.bearerSecret(header) else {
            try checkThrottle(client, scope)
            throw failed(client, keyID: nil, scope, DepotError(.unauthorized, "The Authorization header is not 'Bearer <secret>'."))
        }
        return try await key(secret: String(secret), client: client, scope: scope)
    }

    /// The key of a bearer header when it is cached and right; `nil` leaves the request to the
    /// router (which answers with ``key(authorization:client:scope:)``, failures included).
    func cachedKey(authorization header: String, client: @autoclosure () -> String?) -> (key: AccessKey, generation: Int)? {
        guard let secret = Self.bearerSecret(header), let found = keys.cachedKey(secret),
            AccessKeySecret(text: String(secret)).embeddedID != nil || throttle.wait(address: client(), scope: .admin) == nil
        else { return nil }
        throttle.succeeded(address: client(), kind: found.key.kind)
        return found
    }

    /// Signs in to the console with an admin token.
    /// - Returns: The new session and the token's key.
    /// - Throws: ``ThrottledError``; ``DepotError`` `unauthorized` for a token that is not a working
    ///   key, `forbidden` for an app key.
    func signIn(token: String, client: String?) async throws -> (session: ConsoleSession, key: AccessKey) {
        let key = try await key(secret: token, client: client, scope: .admin)
        guard key.kind == .admin else {
            throw DepotError(.forbidden, "Key '\(key.id)' is an app key; the console needs an admin token.")
        }
        return (try await sessions.begin(for: key), key)
    }

    /// The console session a `depot_console` cookie names, with its admin key; `nil` without a
    /// cookie.
    /// - Throws: ``ThrottledError`` for a cookie that names no live session while its address
    ///   must wait; ``DepotError`` (`unauthorized`)
    ///   for a cookie that names no live session of a working admin key, counted as a failure.
    func session(cookie: Substring?, client: String?) async throws -> (session: ConsoleSession, key: AccessKey)? {
        guard let cookie else { return nil }
        // A cookie holds 256 random bits: a live one is never refused for its address.
        guard let session = ConsoleSession(cookieValue: cookie), let keyID = try await sessions.keyID(of: session),
            let key = try await keys.workingKey(id: keyID), key.kind == .admin
        else {
            try checkThrottle(client, .admin)
            throw failed(
                client, keyID: nil, .admin,
                DepotError(
                    .unauthorized,
                    "Your console session has ended (signed out, unused for too long, past its lifetime, or its token revoked) or the cookie is not one this server made. Sign in again."
                ))
        }
        throttle.succeeded(address: client, kind: .admin)
        return (session, key)
    }

    /// The secret of an `Authorization: Bearer <secret>` header.
    static func bearerSecret(_ header: String) -> Substring? {
        let scheme = "bearer ".utf8
        guard header.utf8.count > scheme.count, zip(header.utf8, scheme).allSatisfy({ $0 | 0x20 == $1 }) else { return nil }
        let secret = header.utf8.dropFirst(scheme.count).drop { $0 == UInt8(ascii: " ") }
        return secret.isEmpty ? nil : Substring(secret)
    }

    /// A generated secret is checked first: right, it is never refused for its address. Any
    /// other text can only be an operator's admin token (or a guess at one): it waits out, and
    /// counts in, its address's admin backoff, on whichever route it is sent.
    private func key(secret: String, client: String?, scope routeScope: AuthenticationThrottle.Scope) async throws -> AccessKey {
        let keyID = AccessKeySecret(text: secret).embeddedID
        let scope = keyID == nil ? .admin : routeScope
        if keyID == nil { try checkThrottle(client, scope) }
        do {
            let key = try await keys.authenticate(secret)
            throttle.succeeded(address: client, kind: key.kind)
            return key
        } catch let error as DepotError where error.code == .unauthorized {
            // A wrong secret of the generated form from an address already backing off waits too.
            let waiting = keyID == nil ? nil : throttle.wait(address: client, scope: scope)
            let error = failed(client, keyID: keyID, scope, error)
            if let keyID, let wait = throttle.wait(keyID: keyID) { throw refused(wait) }
            if let waiting { throw refused(waiting) }
            throw error
        }
    }

    private func checkThrottle(_ client: String?, _ scope: AuthenticationThrottle.Scope) throws {
        if let wait = throttle.wait(address: client, scope: scope) { throw refused(wait) }
    }

    private func failed(_ client: String?, keyID: String?, _ scope: AuthenticationThrottle.Scope, _ error: DepotError) -> DepotError {
        metrics.recordAuthenticationFailure()
        throttle.failed(address: client, keyID: keyID, scope: scope)
        return error
    }

    private func refused(_ wait: Duration) -> ThrottledError {
        metrics.recordThrottled()
        return ThrottledError(wait: wait)
    }
}
