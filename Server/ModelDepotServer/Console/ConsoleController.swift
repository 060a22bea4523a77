import Foundation
import HTTPTypes
import Hummingbird
import ModelDepotShared
import Mustache

/// `/console`: the web console over the same catalog and rules as the admin API, rendered on the
/// server from Mustache templates. Signing in with an admin token sets an `HttpOnly`,
/// `SameSite=Strict` session cookie (`Secure` over https); every change carries the session's
/// CSRF token; every page is sent with a strict Content-Security-Policy and no inline script.
struct ConsoleController {
    let catalog: any ModelCatalog
    let authenticator: Authenticator
    /// With an https public URL, cookies are `Secure` whatever the request says.
    let publicURLIsHTTPS: Bool
    let models: ModelService
    let versions: VersionService
    let uploads: UploadService
    let keys: KeyService
    let rollouts: RolloutService
    let guards: RolloutGuardService
    let experiments: ExperimentService
    let stats: StatsService
    let signer: ManifestSigner
    let templates: MustacheLibrary
    let clock: @Sendable () -> Date

    /// The templates and assets bundled with the server.
    static func loadTemplates() async throws -> MustacheLibrary {
        guard let path = Bundle.module.path(forResource: "Templates", ofType: nil) else {
            throw DepotError(.internalError, "The console's templates are missing from the server's resources.")
        }
        return try await MustacheLibrary(directory: path)
    }

    func register(in routes: RouteInventory) {
        let console = routes.group("console").add(middleware: ConsoleHeadersMiddleware())
        console.get { request, context in
            Response(
                status: .seeOther,
                headers: [.location: try await sessionAndKey(request, context: context) == nil ? "/console/sign-in" : "/console/models"])
        }
        console.get("sign-in") { _, _ in try page("sign-in", ConsolePages.SignIn(error: nil)) }
        console.post("sign-in", use: signIn)
        console.post("sign-out", use: signOut)
        console.get("models", use: listModels)
        console.post("models", use: createModel)
        console.get("models/:name", use: showModel)
        console.get("models/:name/delete", use: confirmDeletion)
        console.post("models/:name/delete", use: deleteModel)
        console.post("models/:name/versions/:number/publish") { try await setPublished(true, $0, $1) }
        console.post("models/:name/versions/:number/unpublish") { try await setPublished(false, $0, $1) }
        console.post("models/:name/versions", use: upload)
        console.get("models/:name/versions/:number", use: showVersion)
        console.get("models/:name/versions/:number/delete", use: confirmVersionDeletion)
        console.post("models/:name/versions/:number/delete", use: deleteVersion)
        registerRollouts(in: console)
        registerResults(in: console)
        registerExperiment(in: console)
        registerKeys(in: console)
        console.get("assets/:file") { _, context in try ConsoleAssets.response(for: context.parameters.get("file") ?? "") }
    }

    // MARK: Sessions

    func signIn(_ request: Request, context: AppRequestContext) async throws -> Response {
        let client = context.client(of: request, through: authenticator.proxies)
        let token = try await ConsoleForm(request)["token"]?.trimmingCharacters(in: .whitespaces) ?? ""
        let signedIn: (session: ConsoleSession, key: AccessKey)
        do {
            signedIn = try await authenticator.signIn(token: token, client: client.address)
        } catch is ThrottledError {
            return try page(
                "sign-in", ConsolePages.SignIn(error: "Too many failed sign-ins from this address; wait a minute and try again."),
                status: .tooManyRequests)
        } catch let error as DepotError where error.code == .unauthorized {
            return try page(
                "sign-in",
                ConsolePages.SignIn(
                    error: "That token is not a working ModelDepot token. Paste the admin token exactly as it was printed."),
                status: .unauthorized)
        } catch let error as DepotError where error.code == .forbidden {
            return try page("sign-in", ConsolePages.SignIn(error: error.message), status: .forbidden)
        }
        context.principal = signedIn.key
        var response = Response(status: .seeOther, headers: [.location: "/console/models"])
        response.setCookie(sessionCookie(signedIn.session.id, client))
        return response
    }

    func signOut(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, _) = try await signedIn(request, context: context, checkingForm: true)
        try await authenticator.sessions.end(session)
        var response = Response(status: .seeOther, headers: [.location: "/console/sign-in"])
        response.setCookie(sessionCookie("", context.client(of: request, through: authenticator.proxies), ending: true))
        return response
    }

    /// The session cookie: `HttpOnly`, `SameSite=Strict`, `Secure` when the client uses https, and
    /// no `Max-Age` (it ends with the browser; the server ends the session itself).
    private func sessionCookie(_ value: String, _ client: TrustedProxies.Client, ending: Bool = false) -> Cookie {
        Cookie(
            name: ConsoleSession.cookieName, value: value, maxAge: ending ? 0 : nil, path: "/console",
            secure: client.isHTTPS || publicURLIsHTTPS, httpOnly: true, sameSite: .strict)
    }

    /// The signed-in session and its admin token's key (the request log names the key); `nil`
    /// without a session cookie.
    /// - Throws: ``ConsoleSignInRequired`` (the sign-in page, `401`, the cookie cleared) for a
    ///   cookie that names no live session.
    func sessionAndKey(_ request: Request, context: AppRequestContext) async throws -> (session: ConsoleSession, key: AccessKey)? {
        let cookie = ConsoleSession.cookieValue(inHeaders: request.headers[values: .cookie])
        let client = context.client(of: request, through: authenticator.proxies)
        let found: (session: ConsoleSession, key: AccessKey)?
        do {
            found = try await authenticator.session(cookie: cookie, client: client.address)
        } catch let error as DepotError where error.code == .unauthorized {
            var response = try page("sign-in", ConsolePages.SignIn(error: error.message), status: .unauthorized)
            response.setCookie(sessionCookie("", client, ending: true))
            throw ConsoleSignInRequired(page: response, error: error)
        }
        context.principal = found?.key
        return found
    }

    /// The session of a request that needs one; with `checkingForm`, its form's CSRF token too.
    /// - Throws: ``ConsoleRedirect`` to the sign-in page without a session; ``DepotError``
    ///   (`forbidden`) for a form without this session's CSRF token.
    func signedIn(_ request: Request, context: AppRequestContext, checkingForm: Bool = false) async throws -> (ConsoleSession, ConsoleForm?)
    {
        let (session, _, form) = try await signedInWithKey(request, context: context, checkingForm: checkingForm)
        return (session, form)
    }

    /// ``signedIn(_:context:checkingForm:)`` with the admin token's key, for changes the audit log records.
    func signedInWithKey(
        _ request: Request, context: AppRequestContext,
        checkingForm: Bool = false
    ) async throws -> (ConsoleSession, AccessKey, ConsoleForm?) {
        guard let (session, key) = try await sessionAndKey(request, context: context) else {
            throw ConsoleRedirect(location: "/console/sign-in")
        }
        guard checkingForm else { return (session, key, nil) }
        let form = try await ConsoleForm(request)
        guard session.accepts(csrf: form["csrf"]) else {
            throw DepotError(
                .forbidden,
                "The form was not sent from this console session (its CSRF token is missing or wrong). Reload the page and try again.")
        }
        return (session, key, form)
    }

    // MARK: Models

    func listModels(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, _) = try await signedIn(request, context: context)
        return try await modelsPage(csrf: session.csrfToken, error: nil)
    }

    private func modelsPage(csrf: String, error: String?, status: HTTPResponse.Status = .ok) async throws -> Response {
        var rows: [ConsolePages.ModelRow] = []
        for summary in try await catalog.models() {
            rows.append(
                ConsolePages.ModelRow(
                    name: summary.name.rawValue, description: summary.description, tags: summary.tags.joined(separator: ", "),
                    newest: summary.latestVersion.map { "v\($0)" } ?? "–", published: summary.publishedVersion.map { "v\($0)" } ?? "–",
                    handsOut: ConsolePages.handsOut(try await catalog.rollout(of: summary.name), summary: summary)))
        }
        return try page("models", ConsolePages.Models(csrf: csrf, error: error, models: rows), status: status)
    }

    func createModel(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, form) = try await signedIn(request, context: context, checkingForm: true)
        let tags = (form?["tags"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        do {
            let name = try ModelName(form?["name"] ?? "")
            let description = form?["description"] ?? ""
            _ = try await catalog.createModel(ModelCreation(name: name, description: description, tags: tags), at: clock())
            return Response(status: .seeOther, headers: [.location: "/console/models/\(name)"])
        } catch let error as DepotError {
            return try await modelsPage(csrf: session.csrfToken, error: error.message, status: error.status)
        }
    }

    /// The model's page; after a publish (`?published=N`), with what publishing version N changed.
    func showModel(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, _) = try await signedIn(request, context: context)
        let published = request.uri.queryParameters.get("published").flatMap { Int($0) }
        return try await modelPage(try context.modelName(), csrf: session.csrfToken, error: nil, published: published)
    }

    private func modelPage(
        _ name: ModelName, csrf: String, error: String?, status: HTTPResponse.Status = .ok,
        published: Int? = nil
    ) async throws -> Response {
        let summary = try await catalog.model(name)
        let versions = try await catalog.versions(of: name)
        let publishedVersions = versions.filter(\.published).map(\.version)
        let segments = RolloutSegments(try await catalog.rollout(of: name), newestPublished: publishedVersions.max())
        let notice = published.flatMap { number in
            publishedVersions.contains(number)
                ? "Published v\(number). "
                    + segments.afterPublishing(number, of: name, previous: publishedVersions.filter { $0 != number }.max())
                : nil
        }
        return try page(
            "model",
            ConsolePages.Model(
                csrf: csrf, error: error, name: name.rawValue, description: summary.description, segments: segments.lines, notice: notice,
                versions: versions.map(ConsolePages.VersionRow.init), maximumUploadSize: uploads.maximumUploadSize), status: status)
    }

    func showVersion(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, _) = try await signedIn(request, context: context)
        let version = try await catalog.version(try context.versionNumber(), of: try context.modelName())
        return try page("version", ConsolePages.VersionPage(csrf: session.csrfToken, version: version))
    }

    // MARK: Versions

    /// The name of the header that carries the CSRF token of a request sent by a console script.
    static let csrfHeader = HTTPField.Name("X-Depot-CSRF")!

    /// `POST /console/models/{name}/versions`: the upload script streams the file as the body, with
    /// the session's CSRF token in `X-Depot-CSRF`, and gets the admin API's answer: the version as
    /// JSON, or the error (the verifier's included) as `{"error": {"code", "message"}}`.
    func upload(_ request: Request, context: AppRequestContext) async throws -> Response {
        let signedIn: (session: ConsoleSession, key: AccessKey)?
        do {
            signedIn = try await sessionAndKey(request, context: context)
        } catch is ConsoleSignInRequired {
            signedIn = nil
        }
        guard let (session, key) = signedIn else {
            throw DepotError(.unauthorized, "Your console session has ended; sign in again, then upload. Nothing was stored.")
        }
        guard session.accepts(csrf: request.headers[Self.csrfHeader]) else {
            throw DepotError(
                .forbidden,
                "The upload was not sent from this console session (its CSRF token is missing or wrong). Reload the page and try again; nothing was stored."
            )
        }
        context.principal = key
        return try await VersionsController.upload(request, context: context, with: uploads)
    }

    func setPublished(_ published: Bool, _ request: Request, _ context: AppRequestContext) async throws -> Response {
        let (session, _) = try await signedIn(request, context: context, checkingForm: true)
        let name = try context.modelName()
        do {
            let number = try context.versionNumber()
            _ = try await versions.setPublished(published, version: number, of: name)
            return Response(status: .seeOther, headers: [.location: "/console/models/\(name)\(published ? "?published=\(number)" : "")"])
        } catch let error as DepotError where error.code == .conflict {
            return try await modelPage(
                name, csrf: session.csrfToken, error: "\(error.message) (Rollouts: 'depot rollout show \(name)'.)",
                status: .conflict)
        }
    }

    func confirmVersionDeletion(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, _) = try await signedIn(request, context: context)
        let version = try await catalog.version(try context.versionNumber(), of: try context.modelName())
        return try page(
            "delete-version",
            ConsolePages.DeleteVersion(
                csrf: session.csrfToken, error: nil, name: version.model.rawValue,
                version: version.version))
    }

    func deleteVersion(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, form) = try await signedIn(request, context: context, checkingForm: true)
        let name = try context.modelName()
        let number = try context.versionNumber()
        guard form?["confirm"] == String(number) else {
            return try page(
                "delete-version",
                ConsolePages.DeleteVersion(
                    csrf: session.csrfToken, error: "Type \(number) to confirm; nothing was deleted.", name: name.rawValue, version: number),
                status: .badRequest)
        }
        do {
            try await versions.delete(number, of: name, logger: context.logger)
            return Response(status: .seeOther, headers: [.location: "/console/models/\(name)"])
        } catch let error as DepotError where error.code == .conflict {
            return try await modelPage(name, csrf: session.csrfToken, error: error.message, status: .conflict)
        }
    }

    func confirmDeletion(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, _) = try await signedIn(request, context: context)
        let summary = try await catalog.model(try context.modelName())
        return try page(
            "delete-model",
            ConsolePages.DeleteModel(
                csrf: session.csrfToken, error: nil, name: summary.name.rawValue,
                versionCount: summary.versionCount))
    }

    func deleteModel(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (session, form) = try await signedIn(request, context: context, checkingForm: true)
        let summary = try await catalog.model(try context.modelName())
        guard form?["confirm"] == summary.name.rawValue else {
            return try page(
                "delete-model",
                ConsolePages.DeleteModel(
                    csrf: session.csrfToken, error: "Type '\(summary.name)' to confirm; nothing was deleted.", name: summary.name.rawValue,
                    versionCount: summary.versionCount), status: .badRequest)
        }
        try await models.delete(summary.name, force: true, logger: context.logger)
        return Response(status: .seeOther, headers: [.location: "/console/models"])
    }

    // MARK: Rendering

    func page(_ template: String, _ context: Any, status: HTTPResponse.Status = .ok) throws -> Response {
        guard let html = templates.render(context, withTemplate: template) else {
            throw DepotError(.internalError, "The console's template '\(template)' is missing.")
        }
        return Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}

/// Sends a request that needs a session to the sign-in page.
struct ConsoleRedirect: Error, HTTPResponseError {
    let location: String
    var status: HTTPResponse.Status { .seeOther }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
    }
}

/// A console request whose cookie names no live session: the sign-in page with `401`.
struct ConsoleSignInRequired: HTTPResponseError {
    let page: Response
    let error: DepotError
    var status: HTTPResponse.Status { .unauthorized }

    func response(from request: Request, context: some RequestContext) throws -> Response { page }
}

/// The console's security headers on every answer: a Content-Security-Policy that allows only the
/// server's own scripts and styles (no inline script) and no framing, no MIME sniffing, no referrer.
struct ConsoleHeadersMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPResponseError where !ServerFailure.hidesCause(error) {
            response = try error.response(from: request, context: context)
        }
        response.headers[HTTPField.Name("Content-Security-Policy")!] = Self.contentSecurityPolicy
        response.headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        return response
    }
}
