import Foundation
import Logging
import ModelDepotShared
import PostgresNIO

/// The catalog in PostgreSQL, shared by any number of replicas: the same contract as
/// ``SQLiteModelCatalog``, with the invariants in the schema (``PostgresCatalogMigrations``)
/// and every read-modify-write holding a row lock on its model, so replicas changing the same
/// model wait for each other.
public final class PostgresModelCatalog: ModelCatalog {
    let client: PostgresClient
    let location: PostgresLocation
    let logger: Logger
    /// How long an operation may wait for the database (a connection, a lock, its queries)
    /// before it fails as `unavailable`: while the database is out of reach, the pool would
    /// otherwise keep requests waiting until its circuit breaker opens, a minute later.
    let deadline: Duration
    private let runner: Task<Void, Never>

    private init(client: PostgresClient, location: PostgresLocation, logger: Logger, deadline: Duration) {
        self.client = client
        self.location = location
        self.logger = logger
        self.deadline = deadline
        runner = Task { await client.run() }
    }

    deinit { runner.cancel() }

    /// Connects, checks the database answers, and applies the schema's missing migrations.
    /// - Throws: ``DepotError`` `unavailable` saying why the database could not be reached or
    ///   used (refused, unknown host, wrong password, no such database).
    /// - Parameters:
    ///   - logger: Where the migrations applied are logged (at `info`); the pool logs its own
    ///     trouble at `error`.
    ///   - deadline: How long a query or transaction may take before it fails as `unavailable`.
    public static func connect(
        _ location: PostgresLocation, logger: Logger = Logger(label: "depot.postgres", factory: { _ in SwiftLogNoOpLogHandler() }),
        deadline: Duration = .seconds(10)
    )
        async throws -> PostgresModelCatalog
    {
        try await checkReachable(location, logger: logger)
        var quiet = logger
        // Not `warning`: the pool warns when a lease comes before its run task has started,
        // which is harmless (the lease waits).
        quiet.logLevel = max(logger.logLevel, .error)
        let catalog = PostgresModelCatalog(
            client: PostgresClient(configuration: location.clientConfiguration, backgroundLogger: quiet),
            location: location, logger: quiet, deadline: deadline)
        do {
            let applied = try await PostgresCatalogMigrations.migrate(catalog.client, logger: quiet)
            if !applied.isEmpty {
                logger.info("migrated the catalog database", metadata: ["applied": "\(applied)", "database": "\(location)"])
            }
        } catch {
            catalog.runner.cancel()
            throw catalog.mapped(error)
        }
        return catalog
    }

    /// Stops the connection pool; the catalog cannot be used afterwards.
    public func close() {
        runner.cancel()
    }

    /// One connection, opened and closed, to turn an unreachable database into a precise error
    /// (the pool would only retry).
    private static func checkReachable(_ location: PostgresLocation, logger: Logger) async throws {
        let tls: PostgresConnection.Configuration.TLS
        do {
            tls =
                switch location.tls {
                case .disable: .disable
                case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
                case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
                }
        } catch {
            throw DepotError(.internalError, "Could not set up TLS for the catalog database.", cause: "\(error)")
        }
        var configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.user,
            password: location.password, database: location.database, tls: tls)
        configuration.options.connectTimeout = .seconds(5)
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            try? await connection.close()
        } catch {
            throw DepotError(
                .unavailable,
                "Could not reach the catalog database \(location): \(reason(error)). Check --database (or DEPOT_DATABASE) and that PostgreSQL is running and lets this user in."
            )
        }
    }

    // MARK: - Models

    public func createModel(_ creation: ModelCreation, at date: Date) async throws -> ModelSummary {
        let name = creation.name.rawValue
        let tags = try Self.json(creation.tags ?? [])
        let inserted = try await transaction { [logger] connection in
            let inserted = try await connection.column(
                """
                INSERT INTO model (name, description, tags, created_at) VALUES (\(name), \(creation.description ?? ""), \(tags)::jsonb, \(date))
                ON CONFLICT (name) DO NOTHING RETURNING id
                """, as: Int64.self, logger: logger)
            if !inserted.isEmpty { try await Self.advanceManifestVersion(creation.name, at: date, connection, logger: logger) }
            return inserted
        }
        guard !inserted.isEmpty else {
            throw CatalogRule.modelExists(creation.name)
        }
        return try await model(creation.name)
    }

    public func models() async throws -> [ModelSummary] {
        try await run { [logger] connection in
            try await Self.summaries(where: "TRUE", connection, logger: logger)
        }
    }

    public func model(_ name: ModelName) async throws -> ModelSummary {
        let found = try await run { [logger] connection in
            try await Self.summaries(where: "model.name = $1", binding: name.rawValue, connection, logger: logger)
        }
        guard let summary = found.first else { throw CatalogRule.noModel(name) }
        return summary
    }

    /// The summaries of the models `condition` selects (with `$1` bound to `binding`), by name.
    private static func summaries(
        where condition: String, binding: String? = nil, _ connection: PostgresConnection,
        logger: Logger
    ) async throws -> [ModelSummary] {
        var bindings = PostgresBindings()
        if let binding { bindings.append(binding) }
        let query = PostgresQuery(
            unsafeSQL: """
                SELECT model.name, model.description, model.tags::text, model.created_at,
                       COUNT(version.id)::bigint, MAX(version.number), MAX(CASE WHEN version.published THEN version.number END)
                FROM model LEFT JOIN version ON version.model_id = model.id
                WHERE \(condition) GROUP BY model.id ORDER BY model.name
                """, binds: bindings)
        var summaries: [ModelSummary] = []
        for try await (name, description, tags, createdAt, count, latest, published)
            in try await connection.query(query, logger: logger).decode((String, String, String, Date, Int, Int?, Int?).self)
        {
            summaries.append(
                ModelSummary(
                    name: try ModelName(name), description: description, tags: try decoded([String].self, tags),
                    createdAt: createdAt, versionCount: count, latestVersion: latest, publishedVersion: published))
        }
        return summaries
    }

    // MARK: - Shared helpers

    /// A model row, locked until the transaction ends.
    struct LockedModel {
        let id: Int64
        let lastVersionNumber: Int
    }

    static func lockModel(_ name: ModelName, _ connection: PostgresConnection, logger: Logger) async throws -> LockedModel {
        let rows = try await connection.query(
            "SELECT id, last_version_number::bigint FROM model WHERE name = \(name.rawValue) FOR UPDATE",
            logger: logger)
        for try await (id, last) in rows.decode((Int64, Int).self) { return LockedModel(id: id, lastVersionNumber: last) }
        throw CatalogRule.noModel(name)
    }

    static func modelID(_ name: ModelName, _ connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        let rows = try await connection.column("SELECT id FROM model WHERE name = \(name.rawValue)", as: Int64.self, logger: logger)
        guard let id = rows.first else { throw CatalogRule.noModel(name) }
        return id
    }

    /// Those of `digests` no version references any more, as its model, a companion file or a patch.
    static func unreferenced(_ digests: Set<String>, _ connection: PostgresConnection, logger: Logger) async throws -> Set<String> {
        guard !digests.isEmpty else { return [] }
        let still = try await connection.column(
            """
            SELECT sha256 FROM version WHERE sha256 = ANY(\(Array(digests)))
            UNION SELECT sha256 FROM version_file WHERE sha256 = ANY(\(Array(digests)))
            UNION SELECT sha256 FROM version_patch WHERE sha256 = ANY(\(Array(digests)))
            """, as: String.self, logger: logger)
        return digests.subtracting(still)
    }

    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
    }

    static func decoded<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(text.utf8))
        } catch {
            throw DepotError(.internalError, "The catalog database holds a \(type) it cannot read.", cause: "\(error)")
        }
    }

    /// Runs `body` on a pooled connection, outside a transaction.
    func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await withinDeadline { [client] in try await client.withConnection { try await body($0) } }
    }

    /// Runs `body` in a transaction: all of it is committed, or nothing.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await withinDeadline { [client, logger] in try await client.withTransaction(logger: logger) { try await body($0) } }
    }

    /// `body`'s result, or `unavailable` once ``deadline`` has passed (`body` is then cancelled).
    private func withinDeadline<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let deadline = deadline
        do {
            return try await withThrowingTaskGroup(of: T.self) { group in
                group.addTask { try await body() }
                group.addTask { [location] in
                    try await Task.sleep(for: deadline)
                    throw DepotError(
                        .unavailable,
                        "The catalog database \(location) did not answer within \(deadline). Try again shortly; the server's operator should check PostgreSQL."
                    )
                }
                defer { group.cancelAll() }
                return try await group.next()!
            }
        } catch {
            throw mapped(error)
        }
    }

    func mapped(_ error: any Error) -> any Error {
        if let error = error as? DepotError { return error }
        if let error = error as? PostgresTransactionError,
            let inner = error.closureError ?? error.beginError ?? error.commitError
        {
            return mapped(inner)
        }
        if let error = error as? PSQLError, error.code == .server {
            if error.serverInfo?[.sqlState] == "53100" { return FileSystemBlobStore.storageFull }
            return DepotError(.internalError, "The catalog database refused a change: \(Self.reason(error)).")
        }
        return DepotError(
            .unavailable,
            "The catalog database \(location) cannot be reached: \(Self.reason(error)). Try again shortly; the server's operator should check PostgreSQL."
        )
    }

    /// The server's message for a PostgreSQL error, else the error's description.
    static func reason(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                return message + (error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
            }
            if let underlying = error.underlying { return "\(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }
}

extension PostgresConnection {
    /// The first column of every row `query` returns.
    func column<T: PostgresDecodable & Sendable>(_ query: PostgresQuery, as type: T.Type, logger: Logger) async throws -> [T] {
        let rows = try await self.query(query, logger: logger)
        var values: [T] = []
        for try await value in rows.decode(T.self) { values.append(value) }
        return values
    }
}
