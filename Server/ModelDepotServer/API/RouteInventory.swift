import Hummingbird

/// The router, seen through a layer that records every route registered on it, so a test can
/// hold the routes against the OpenAPI document.
final class RouteInventory: RouterMethods {
    typealias Context = AppRequestContext

    let router: Router<AppRequestContext>
    /// Every registered path, in `{parameter}` form.
    private(set) var paths: Set<String> = []

    init(router: Router<AppRequestContext>) {
        self.router = router
    }

    @discardableResult
    func on<Responder: HTTPResponder>(_ path: RouterPath, method: HTTPRequest.Method, responder: Responder) -> Self
    where Responder.Context == Context {
        paths.insert(path.description.hasPrefix("/") ? path.description : "/" + path.description)
        router.on(path, method: method, responder: responder)
        return self
    }

    @discardableResult
    func add(middleware: any MiddlewareProtocol<Request, Response, Context>) -> Self {
        router.add(middleware: middleware)
        return self
    }
}
