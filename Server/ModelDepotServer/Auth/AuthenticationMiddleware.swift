import Hummingbird
import ModelDepotShared

/// Resolves `Authorization: Bearer <secret>` to a working key, or answers 401.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let keys: AccessKeyCache

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            throw DepotError(.unauthorized, "No API key: send 'Authorization: Bearer <secret>' (the CLI reads --token or DEPOT_TOKEN).")
        }
        guard let secret = Self.bearerSecret(header) else {
            throw DepotError(.unauthorized, "The Authorization header is not 'Bearer <secret>'.")
        }
        var context = context
        context.principal = try await keys.authenticate(String(secret))
        return try await next(request, context)
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
