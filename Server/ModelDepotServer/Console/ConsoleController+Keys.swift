import Foundation
import Hummingbird
import ModelDepotShared

/// The keys page: admin tokens and app keys (created with the secret shown once, revoked after
/// confirmation) and the signing status.
extension ConsoleController {
    func registerKeys(in console: RouterGroup<AppRequestContext>) {
        console.get("keys", use: listKeys)
        console.post("keys", use: createKey)
        console.get("keys/:id/revoke", use: confirmRevocation)
        console.post("keys/:id/revoke", use: revokeKey)
    }

    func listKeys(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, _) = try await signedIn(request, context: context)
        return try await keysPage(csrf: session.csrfToken, error: nil)
    }

    private func keysPage(
        csrf: String, error: String?, created: CreatedAccessKey? = nil,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let signing = signer.status
        return try page(
            "keys",
            ConsolePages.Keys(
                csrf: csrf, error: error, created: created.map { ConsolePages.CreatedKey(id: $0.id, secret: $0.secret) },
                keys: try await catalog.keys().map(ConsolePages.KeyRow.init),
                activeKey: signing.active.keyid, pendingKey: signing.pending?.keyid,
                rootVersion: signing.rootVersion.map { "v\($0)" } ?? "none yet", signingWarning: signer.startupWarning(now: clock())),
            status: status)
    }

    func createKey(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, form) = try await signedIn(request, context: context, checkingForm: true)
        do {
            let kind: AccessKey.Kind = form?["kind"] == "admin" ? .admin : .app
            let models = try (form?["models"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }.map { text throws(DepotError) in try ModelName(text) }
            let created = try await keys.create(
                AccessKeyCreation(
                    kind: kind, name: form?["name"] ?? "",
                    models: models.isEmpty ? nil : models))
            return try await keysPage(csrf: session.csrfToken, error: nil, created: created, status: .created)
        } catch let error as DepotError {
            return try await keysPage(csrf: session.csrfToken, error: error.message, status: error.status)
        }
    }

    func confirmRevocation(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, _) = try await signedIn(request, context: context)
        let id = context.parameters.get("id") ?? ""
        guard let key = try await catalog.keys().first(where: { $0.id == id }) else {
            throw DepotError(.notFound, "No key has id '\(id)'.")
        }
        return try page("revoke-key", ConsolePages.RevokeKey(csrf: session.csrfToken, error: nil, key: ConsolePages.KeyRow(key)))
    }

    func revokeKey(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, _) = try await signedIn(request, context: context, checkingForm: true)
        do {
            _ = try await keys.revoke(id: context.parameters.get("id") ?? "")
            return Response(status: .seeOther, headers: [.location: "/console/keys"])
        } catch let error as DepotError {
            return try await keysPage(csrf: session.csrfToken, error: error.message, status: error.status)
        }
    }
}
