import Hummingbird
import ModelDepotShared

/// Resolves `Authorization: Bearer <secret>` to a working key through the ``Authenticator``, or
/// answers 401; after too many failures, 429.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let authenticator: Authenticator

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        context.principal = try await authenticator.key(
            authorization: request.headers[.authorization],
            client: context.client(of: request, through: authenticator.proxies).address,
            scope: request.uri.path.hasPrefix("/v1/admin/") ? .admin : .device)
        return try await next(request, context)
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
