import Foundation
import ModelDepotShared
import TestSupport
import Testing

@testable import ModelDepotServer

/// What only the PostgreSQL catalog has: migrations shared by replicas, the schema's own
/// invariants, and errors for a database that cannot be used.
@Suite struct PostgresCatalogTests {
    @Test func replicasStartingTogetherApplyEachMigrationOnce() async throws {
        let url = try await TestPostgres.freshDatabase()
        let location = try PostgresLocation(url: url)
        let catalogs = try await withThrowingTaskGroup(of: PostgresModelCatalog.self) { group in
            for _ in 0..<6 { group.addTask { try await PostgresModelCatalog.forTest(location) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        defer { catalogs.forEach { $0.close() } }
        let applied = try await TestPostgres.query(url, "SELECT string_agg(version::text, ',' ORDER BY version) FROM depot_migration")
        #expect(applied == PostgresCatalogMigrations.migrations.map { String($0.version) }.joined(separator: ","))
        _ = try await catalogs[0].createModel(ModelCreation(name: try ModelName("flowers")), at: Date())
        #expect(try await catalogs[5].models().map(\.name.rawValue) == ["flowers"], "every replica sees one catalog")
    }

    /// Replicas writing outcome groups at once into the same rows add up, keep one hourly limit,
    /// and wait for each other instead of deadlocking (every transaction locks in one order).
    @Test func replicasRecordingOutcomesTogetherAddUpAndShareTheHourlyLimit() async throws {
        let location = try await PostgresLocation(url: try TestPostgres.freshDatabase())
        let first = try await PostgresModelCatalog.forTest(location)
        let replicas = [first, try await PostgresModelCatalog.forTest(location), try await PostgresModelCatalog.forTest(location)]
        defer { replicas.forEach { $0.close() } }
        let flowers = CatalogFixtures.name("flowers"), hour = 500_000
        _ = try await first.createModel(ModelCreation(name: flowers), at: CatalogFixtures.instant)
        _ = try await first.addVersion(CatalogFixtures.upload("a"), to: flowers, publish: true, at: CatalogFixtures.instant)
        // 3 replicas × 4 groups × 60 batches; installation 0 sends 1,000 events a batch (720 in all,
        // so the limit refuses all but 20), the other 12 installations 1 event a batch.
        let results = try await withThrowingTaskGroup(of: [(installation: Int64, applied: Bool)].self) { group in
            for (replica, catalog) in replicas.enumerated() {
                for call in 0..<4 {
                    group.addTask {
                        let batches = (0..<60).map { index in
                            let installation = Int64((index + replica + call) % 13)
                            return (
                                model: flowers,
                                batch: OutcomeBatchRecord(
                                    id: UUID().uuidString.lowercased(), installation: installation, receivedHour: hour,
                                    events: installation == 0 ? 1_000 : 1,
                                    totals: [
                                        .init(metric: "installed", arm: .default, version: 1, hour: hour, network: 1, count: 1, sum: 2)
                                    ],
                                    exposures: [.init(arm: .default, version: 1, hour: hour, network: 1)], appMetrics: [])
                            )
                        }
                        let results = try await catalog.recordOutcomes(batches)
                        return try zip(batches, results).map { sent, result in
                            if case .failure(let error) = result, error.code != .tooManyRequests { throw error }
                            return (sent.batch.installation, (try? result.get()) == true)
                        }
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(results.count == 720)
        let applied = Dictionary(results.filter(\.applied).map { ($0.installation, 1) }, uniquingKeysWith: +)
        #expect(applied[0] == OutcomeBatch.maximumEventsPerHour / 1_000, "installation 0 up to the limit, across replicas")
        #expect(results.filter { !$0.applied }.allSatisfy { $0.installation == 0 }, "only installation 0 was refused")
        let rows = try await replicas[2].outcomes(of: flowers)["installed"]?[.default] ?? []
        #expect(
            Dictionary(rows.map { ($0.installation, $0.count) }, uniquingKeysWith: +) == applied,
            "one row per installation, every batch counted")
        #expect(rows.allSatisfy { $0.sum == Double(2 * $0.count) })
    }

    @Test func aDatabaseFromANewerDepotIsRefused() async throws {
        let url = try await TestPostgres.freshDatabase()
        try await PostgresModelCatalog.connect(try PostgresLocation(url: url)).close()
        _ = try await TestPostgres.query(url, "INSERT INTO depot_migration (version, name) VALUES (99, 'from the future')")
        let error = await #expect(throws: DepotError.self) { try await PostgresModelCatalog.connect(try PostgresLocation(url: url)) }
        #expect(error?.code == .internalError)
        #expect(error?.message.contains("schema version 99") == true)
    }

    @Test func theSchemaHoldsTheInvariantsItself() async throws {
        let url = try await TestPostgres.freshDatabase()
        try await PostgresModelCatalog.connect(try PostgresLocation(url: url)).close()
        let now = "now()"
        // Each is refused by the constraint named (PostgreSQL names a column's CHECK `table_column_check`
        // and its foreign key `table_column_fkey`, and checks a row's CHECKs in the order of their names).
        for (sql, what, constraint) in [
            ("INSERT INTO model (name, created_at) VALUES ('Bad Name', \(now))", "a name outside [a-z0-9._-]", "model_name_check"),
            ("INSERT INTO model (name, created_at) VALUES ('-dash', \(now))", "a name starting with a dash", "model_name_check"),
            (
                "INSERT INTO version (model_id, number, sha256, size, created_at, tflite) VALUES (12345, 1, repeat('a', 64), 1, \(now), '{}')",
                "a version of no model", "version_model_id_fkey"
            ),
            (
                "INSERT INTO access_key (id, kind, secret_hash, created_at) VALUES ('k', 'root', '\\x00', \(now))",
                "an unknown kind and a short hash", "access_key_kind_check"
            ),
        ] {
            let refused = await #expect(throws: TestPostgres.Unavailable.self, "\(what)") { try await TestPostgres.query(url, sql) }
            #expect(
                refused?.description.contains("violates") == true && refused?.description.contains("constraint \"\(constraint)\"") == true,
                "\(what): \(refused?.description ?? "")")
        }
        _ = try await TestPostgres.query(url, "INSERT INTO model (name, created_at) VALUES ('flowers', \(now))")
        let badDigest = await #expect(throws: TestPostgres.Unavailable.self, "a bad digest") {
            try await TestPostgres.query(
                url,
                "INSERT INTO version (model_id, number, sha256, size, created_at, tflite) SELECT id, 1, 'XYZ', 1, now(), '{}' FROM model")
        }
        #expect(
            badDigest?.description.contains("violates check constraint \"version_sha256_check\"") == true, "\(badDigest?.description ?? "")"
        )
        let versionZero = await #expect(throws: TestPostgres.Unavailable.self, "version 0") {
            try await TestPostgres.query(
                url,
                "INSERT INTO version (model_id, number, sha256, size, created_at, tflite) SELECT id, 0, repeat('a', 64), 1, now(), '{}' FROM model"
            )
        }
        #expect(
            versionZero?.description.contains("violates check constraint \"version_number_check\"") == true,
            "\(versionZero?.description ?? "")")
        await #expect(try TestPostgres.query(url, "SELECT count(*) FROM version") == "0")
    }

    @Test func anUnreachableDatabaseIsAClearError() async throws {
        let server = try TestPostgres.serverURL()
        let closedPort = try #require(URLComponents(string: server)).port! == 1 ? 2 : 1
        let refused = await #expect(throws: DepotError.self) {
            try await PostgresModelCatalog.connect(
                try PostgresLocation(url: "postgres://depot:x@127.0.0.1:\(closedPort)/depot?sslmode=disable"))
        }
        #expect(refused?.code == .unavailable)
        #expect(refused?.message.contains("Could not reach the catalog database postgres://depot@127.0.0.1:\(closedPort)/depot") == true)

        var wrongPassword = try #require(URLComponents(string: server))
        wrongPassword.password = "wrong"
        let denied = await #expect(throws: DepotError.self) {
            try await PostgresModelCatalog.connect(try PostgresLocation(url: wrongPassword.string!))
        }
        #expect(denied?.code == .unavailable)
        #expect(denied?.message.contains("password authentication failed") == true)
        #expect(denied?.message.contains("wrong") == false, "the password is never shown")

        let noDatabase = await #expect(throws: DepotError.self) {
            try await PostgresModelCatalog.connect(
                try PostgresLocation(url: server.replacingOccurrences(of: "/postgres?", with: "/missing_db?")))
        }
        #expect(noDatabase?.code == .unavailable)
        #expect(noDatabase?.message.contains("\"missing_db\" does not exist") == true)
    }

    @Test(arguments: [
        ("mysql://u@h/db", "is not a postgres:// URL"),
        ("postgres:///db", "names no host"),
        ("postgres://h/db", "names no user"),
        ("postgres://u@h", "names no database"),
        ("postgres://u@h/db?sslmode=maybe", "sslmode=maybe"),
        ("postgres://u@h/db?pool=5", "pool=5"),
    ])
    func badDatabaseURLsAreNamed(_ url: String, _ complaint: String) {
        let error = #expect(throws: DepotError.self) { try PostgresLocation(url: url) }
        #expect(error?.code == .badRequest)
        #expect(error?.message.contains(complaint) == true, "\(error?.message ?? "")")
    }

    @Test func aDatabaseURLIsReadLikeLibpqReadsIt() throws {
        let location = try PostgresLocation(url: "postgresql://d%40pot:p%2Fss@db.example:6543/catalog?sslmode=require")
        #expect(location.user == "d@pot" && location.password == "p/ss" && location.host == "db.example" && location.port == 6543)
        #expect(location.database == "catalog" && location.tls == .require)
        #expect(location.description == "postgres://d@pot@db.example:6543/catalog", "no password in logs")
        #expect(try PostgresLocation(url: "postgres://u@h/db").port == 5432)
    }

    @Test(arguments: [
        ("postgres://u@db.example/db", PostgresLocation.TLSMode.require),
        ("postgres://u@10.0.0.5/db", .require),
        ("postgres://u@127.0.0.1.example/db", .require),
        ("postgres://u@[2001:db8::1]:5432/db", .require),
        ("postgres://u@localhost/db", .prefer),
        ("postgres://u@LOCALHOST:6543/db", .prefer),
        ("postgres://u@127.0.0.1/db", .prefer),
        ("postgres://u@127.1.2.3/db", .prefer),
        ("postgres://u@[::1]:5432/db", .prefer),
        ("postgres://u@[::ffff:127.0.0.1]/db", .prefer),
        ("postgres://u@127.1/db", .require),
        ("postgres://u@db.example/db?sslmode=disable", .disable),
        ("postgres://u@localhost/db?sslmode=require", .require),
    ])
    func aDatabaseOnTheNetworkNeedsTLSUnlessTheURLSaysOtherwise(_ url: String, _ tls: PostgresLocation.TLSMode) throws {
        #expect(try PostgresLocation(url: url).tls == tls)
    }

    /// A group goes in transactions of `outcomeTransactionSize` (128): one that fails (here a row its CHECK refuses, which no
    /// checked batch holds) fails its own batches, not those committed before or after it.
    @Test func outcomeBatchesGoInTransactionsOfTheirOwn() async throws {
        let catalog = try await PostgresModelCatalog.forTest(try PostgresLocation(url: try TestPostgres.freshDatabase()))
        defer { catalog.close() }
        let flowers = CatalogFixtures.name("flowers")
        _ = try await catalog.createModel(ModelCreation(name: flowers), at: CatalogFixtures.instant)
        _ = try await catalog.addVersion(CatalogFixtures.upload("a"), to: flowers, publish: true, at: CatalogFixtures.instant)
        let size = PostgresModelCatalog.outcomeTransactionSize
        let broken = size + 5
        let batches = (0..<(2 * size + 20)).map { index in
            (
                model: flowers,
                batch: OutcomeBatchRecord(
                    id: UUID().uuidString.lowercased(), installation: Int64(index), receivedHour: 500_000, events: 1,
                    totals: [
                        .init(
                            metric: "installed", arm: .default, version: 1, hour: 500_000, network: 1, count: index == broken ? -1 : 1,
                            sum: 1)
                    ],
                    exposures: [.init(arm: .default, version: 1, hour: 500_000, network: 1)], appMetrics: [])
            )
        }
        let results = try await catalog.recordOutcomes(batches)
        #expect(results.count == batches.count)
        let failed = results.indices.filter { (try? results[$0].get()) == nil }
        let reasons = Set(
            failed.compactMap { index -> String? in
                guard case .failure(let error) = results[index] else { return nil }
                return error.message
            })
        #expect(failed == Array(size..<(2 * size)), "the second transaction's batches, and only they, failed: \(reasons)")
        #expect(results.indices.filter { (try? results[$0].get()) == true }.count == size + 20)
        if case .failure(let error) = results[size] { #expect(error.message.contains("outcome_count_check"), "\(error.message)") }
        #expect(try await catalog.outcomes(of: flowers)["installed"]?[.default]?.count == size + 20)

        // The failed ones are applied when sent again without the broken one.
        let again = try await catalog.recordOutcomes(failed.filter { $0 != broken }.map { batches[$0] })
        #expect(again.allSatisfy { (try? $0.get()) == true })
        #expect(try await catalog.outcomes(of: flowers)["installed"]?[.default]?.count == 2 * size + 19)
    }
}
