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
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty else { return nil }
        return parts[1]
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
