import Hummingbird
import ModelDepotShared

/// Resolves `Authorization: Bearer <secret>` to a working key, or answers 401; after too many
/// failures, 429 (see ``AuthenticationThrottle``).
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let keys: AccessKeyCache
    let throttle: AuthenticationThrottle
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let address = context.clientAddress
        if let wait = throttle.wait(address: address) { throw refused(wait) }
        let key = try await authenticate(request.headers[.authorization], address: address)
        throttle.succeeded(address: address)
        var context = context
        context.principal = key
        return try await next(request, context)
    }

    private func authenticate(_ header: String?, address: String?) async throws -> AccessKey {
        guard let header else {
            failed(address: address, keyID: nil)
            throw DepotError(.unauthorized, "No API key: send 'Authorization: Bearer <secret>' (the CLI reads --token or DEPOT_TOKEN).")
        }
        guard let secret = Self.bearerSecret(header) else {
            failed(address: address, keyID: nil)
            throw DepotError(.unauthorized, "The Authorization header is not 'Bearer <secret>'.")
        }
        let keyID = AccessKeySecret(text: String(secret)).embeddedID
        do {
            return try await keys.authenticate(String(secret))
        } catch {
            failed(address: address, keyID: keyID)
            if let keyID, let wait = throttle.wait(keyID: keyID) { throw refused(wait) }
            throw error
        }
    }

    private func failed(address: String?, keyID: String?) {
        metrics.recordAuthenticationFailure()
        throttle.failed(address: address, keyID: keyID)
    }

    private func refused(_ wait: Duration) -> ThrottledError {
        metrics.recordThrottled()
        return ThrottledError(wait: wait)
    }

    /// The secret of an `Authorization: Bearer <secret>` header.
    static func bearerSecret(_ header: String) -> Substring? {
        let scheme = "bearer ".utf8
        guard header.utf8.count > scheme.count, zip(header.utf8, scheme).allSatisfy({ $0 | 0x20 == $1 }) else { return nil }
        let secret = header.utf8.dropFirst(scheme.count).drop { $0 == UInt8(ascii: " ") }
        return secret.isEmpty ? nil : Substring(secret)
    }
}

/// Lets only admin tokens through; app keys get 403.
struct AdminOnlyMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let key = try context.requirePrincipal()
        guard key.kind == .admin else {
            throw DepotError(.forbidden, "Key '\(key.id)' is an app key; the admin API needs an admin token.")
        }
        return try await next(request, context)
    }
}
