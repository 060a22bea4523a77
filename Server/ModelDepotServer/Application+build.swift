import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import ModelDepotShared
import Mustache

/// Wires the server: storage, catalog, caches, routes. Used by `depot serve` and by tests.
/// - Parameters:
///   - configuration: Where to listen and keep data.
///   - onServerRunning: Called with the bound port once the server listens.
/// - Returns: The application, ready to `runService()`.
public func buildApplication(
    _ configuration: ServerConfiguration,
    onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    var logger = Logger(label: "depot")
    logger.logLevel = configuration.logLevel
    let deployment = try await Deployment.open(configuration, logger: logger)
    let catalog = deployment.catalog
    try await catalog.raiseManifestVersions(notBelow: Int(configuration.clock().timeIntervalSince1970 * 1000))
    let index = BlobIndex(catalog: catalog, blobs: deployment.blobs)
    try await index.reload()
    try await ensureAdminToken(catalog: catalog, configuration: configuration, logger: logger)

    let signer = try await ManifestSigner(keys: deployment.signingKeys, catalog: catalog)
    if let warning = signer.startupWarning(now: configuration.clock()) { logger.warning("\(warning)") }

    let clock = configuration.clock
    let identifiers = try IdentifierKey(secret: try await deployment.signingKeys.identifierSecret())
    let usage = UsageCounter(identifiers: identifiers, clock: clock)
    let requestLog = RequestLog(isEnabled: configuration.logLevel <= .info)
    let built = buildRouter(
        configuration: configuration, deployment: deployment, index: index, signer: signer, usage: usage,
        identifiers: identifiers, clock: clock, requestLog: requestLog, templates: try await ConsoleController.loadTemplates(),
        logger: logger)
    // Blobs a crash left without a version (stored, but the row never committed) go before the
    // first request; then every interval.
    _ = try await built.collector.collect(wait: true)
    let fastPaths = built.fastPaths
    let (guards, collector, collectionLogger) = (built.guards, built.collector, logger)
    let patchWorker = PatchWorker(patches: built.patches, interval: configuration.patchInterval)
    let connections = ConnectionCounter()
    return Application(
        router: built.routes.router,
        server: HTTPServerBuilder { responder in
            DepotHTTPChannel(responder: responder, fastPaths: fastPaths, limits: configuration.connectionLimits, counter: connections)
        },
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "ModelDepot"),
        services: [
            RequestLogService(log: requestLog),
            PeriodicWork(
                every: configuration.usageFlushInterval, atShutdown: true,
                failure: "could not write usage counts; keeping them for the next attempt", logger: logger
            ) {
                try await usage.flush(to: catalog)
            },
            PeriodicWork(
                every: .seconds(3_600), start: .atOnce,
                failure: "could not prune outcome batch ids and old outcomes; trying again in an hour", logger: logger
            ) {
                let now = clock()
                try await catalog.pruneOutcomes(
                    batchesBefore: OutcomeBatch.prunedBeforeHour(now: now),
                    rowsBefore: Int(now.timeIntervalSince1970 / 3_600) - configuration.outcomeRetentionDays * 24)
            },
            PeriodicWork(
                every: configuration.guardReviewInterval,
                failure: "could not review guarded rollouts; trying again at the next interval", logger: logger
            ) {
                try await guards.reviewAll()
            },
            PeriodicWork(
                every: configuration.blobCollectionInterval,
                failure: "could not collect unreferenced blobs; trying again later", logger: logger
            ) {
                try await collector.collectLogging(to: collectionLogger)
            },
            patchWorker,
        ]
            + (deployment.changes.map {
                [CatalogChangeFollower(feed: $0, caches: built.caches, pollInterval: configuration.changePollInterval, logger: logger)]
            } ?? []),
        onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
        logger: logger
    )
}

/// Registers every route and middleware; returns the router with the inventory of its paths,
/// and the hot paths that answer manifests and blobs before it from the same caches.
func buildRouter(
    configuration: ServerConfiguration, deployment: Deployment, index: BlobIndex, signer: ManifestSigner,
    usage: UsageCounter, identifiers: IdentifierKey, clock: @escaping @Sendable () -> Date,
    requestLog: RequestLog, templates: MustacheLibrary, logger: Logger = Logger(label: "depot")
)
    -> BuiltRouter
{
    let (catalog, blobs) = (deployment.catalog, deployment.blobs)
    let metrics = ServerMetrics(requestLog: requestLog)
    let manifests = ManifestCache(signer: signer, lifetime: configuration.manifestLifetime, clock: clock)
    let keys = AccessKeyCache(catalog: catalog)
    let caches = CatalogCaches(catalog: catalog, manifests: manifests, keys: keys, index: index, signer: signer, logger: logger)
    let collector = BlobCollector(catalog: catalog, blobs: blobs, lock: deployment.collectionLock, index: index, clock: clock)
    let sessions = ConsoleSessions(
        catalog: catalog, idleTimeout: configuration.consoleIdleTimeout,
        lifetime: configuration.consoleSessionLifetime, clock: clock)
    let modelService = ModelService(catalog: catalog, collector: collector, caches: caches, clock: clock)
    let keyService = KeyService(catalog: catalog, caches: caches, sessions: sessions, clock: clock)
    let rolloutService = RolloutService(catalog: catalog, caches: caches, clock: clock)
    let patches = PatchService(
        catalog: catalog, blobs: blobs, lock: deployment.patchLock, collectionLock: deployment.collectionLock,
        caches: caches, sources: configuration.patchSources, maximumSize: configuration.patchMaximumSize,
        metrics: metrics, logger: logger, clock: clock)

    let routes = RouteInventory(router: Router(context: AppRequestContext.self))
    routes.add(middleware: RequestLogMiddleware(metrics: metrics, log: requestLog))
    OperationsController(catalog: catalog, blobs: blobs, metrics: metrics).register(in: routes)
    let authenticator = Authenticator(
        keys: keys,
        throttle: AuthenticationThrottle(
            allowance: configuration.authenticationFailureAllowance,
            clock: configuration.authenticationClock),
        metrics: metrics, sessions: sessions, proxies: TrustedProxies(configuration.trustedProxies))
    let client = routes.group("v1").add(middleware: AuthenticationMiddleware(authenticator: authenticator))
    let manifestController = ManifestController(
        catalog: catalog, manifests: manifests, metrics: metrics, usage: usage, signer: signer, clock: clock)
    let blobsController = BlobsController(index: index, delivery: deployment.delivery, metrics: metrics, usage: usage, signer: signer)
    let signing = SigningController(
        catalog: catalog, signer: signer,
        service: SigningService(catalog: catalog, signer: signer, caches: caches, clock: clock))
    manifestController.register(in: client)
    blobsController.register(in: client)
    signing.registerPublic(in: client)
    let experimentService = ExperimentService(
        catalog: catalog, signer: signer, budget: NetworkBudget(perHour: configuration.outcomeInstallationsPerNetwork),
        prefixes: configuration.outcomeNetworkPrefixes, identifiers: identifiers, clock: clock)
    let experiments = ExperimentController(service: experimentService, proxies: authenticator.proxies)
    let guards = RolloutGuardService(
        catalog: catalog, caches: caches, experiments: experimentService, lock: deployment.guardLock,
        webhook: GuardWebhook(deadline: .init(configuration.webhookDeadline)), clock: clock, logger: logger)
    experiments.registerDevice(in: client)
    let admin = client.group("admin").add(middleware: AdminOnlyMiddleware())
    ModelsController(catalog: catalog, service: modelService).register(in: admin)
    BlobCollectionController(collector: collector).register(in: admin)
    let versionService = VersionService(catalog: catalog, collector: collector, caches: caches, patches: patches, clock: clock)
    let uploads = UploadService(
        catalog: catalog, blobs: blobs, versions: versionService, metrics: metrics, maximumUploadSize: configuration.maximumUploadSize,
        verificationPolicy: configuration.verificationPolicy)
    VersionsController(catalog: catalog, service: versionService, uploads: uploads).register(in: admin)
    KeysController(catalog: catalog, service: keyService).register(in: admin)
    RolloutsController(catalog: catalog, service: rolloutService).register(in: admin)
    RolloutGuardsController(service: guards).register(in: admin)
    let stats = StatsService(catalog: catalog, usage: usage, clock: clock)
    StatsController(service: stats).register(in: admin)
    signing.registerAdmin(in: admin)
    experiments.registerAdmin(in: admin)
    ConsoleController(
        catalog: catalog, authenticator: authenticator, publicURLIsHTTPS: configuration.publicURL?.scheme?.lowercased() == "https",
        models: modelService, versions: versionService, uploads: uploads, keys: keyService,
        rollouts: rolloutService, guards: guards, experiments: experimentService, stats: stats, signer: signer,
        templates: templates, clock: clock
    )
    .register(in: routes)
    return BuiltRouter(
        routes: routes,
        fastPaths: FastPaths(
            authenticator: authenticator, manifests: manifestController, blobs: blobsController,
            experiments: experimentService, metrics: metrics, log: requestLog),
        caches: caches, collector: collector, guards: guards, patches: patches)
}

/// What ``buildRouter(configuration:deployment:index:signer:usage:identifiers:clock:requestLog:templates:logger:)``
/// makes: the routes, the hot paths that answer before them from the same caches, and the services
/// the application's periodic work runs.
struct BuiltRouter {
    let routes: RouteInventory
    let fastPaths: FastPaths
    let caches: CatalogCaches
    let collector: BlobCollector
    let guards: RolloutGuardService
    let patches: PatchService
}

/// On first start, creates the admin token (from `DEPOT_ADMIN_TOKEN` when given) and prints a
/// generated one once; only its hash is stored.
private func ensureAdminToken(catalog: any AccessCatalog, configuration: ServerConfiguration, logger: Logger) async throws {
    guard try await !catalog.workingKeys().contains(where: { $0.key.kind == .admin }) else { return }
    if let token = configuration.initialAdminToken { try AdminTokenStrength.check(token) }
    let secret = configuration.initialAdminToken.map { AccessKeySecret(text: $0) } ?? .generate()
    let created = try await KeyService(catalog: catalog, caches: nil, sessions: nil, clock: configuration.clock)
        .issue(kind: .admin, name: "initial admin token", models: nil, secret: secret)
    if configuration.initialAdminToken == nil {
        // Written at once, not through `print`'s buffer: under a service manager standard output
        // is a pipe, and a buffered token would appear only when the server stops.
        FileHandle.standardOutput.write(
            Data(
                """
                Created the first admin token. It is shown only this once; keep it safe:

                    \(secret.text)

                Use it with: depot login --server http://\(configuration.host):\(configuration.port) --token <token>

                """.utf8))
    } else {
        logger.info("created the first admin token from the configuration", metadata: ["key": "\(created.id)"])
    }
}
