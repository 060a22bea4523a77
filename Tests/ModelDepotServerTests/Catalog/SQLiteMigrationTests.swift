import Foundation
import GRDB
import ModelDepotRollouts
import ModelDepotShared
import Testing

@testable import ModelDepotServer

/// Catalogs written by earlier versions open with what they held: one written before v13
/// (exposures kept in their own table, the hourly limit keyed by installation) with the same
/// exposures, read from the outcome rows, and the same limits; one written before v15 (batch rows
/// keyed by id) with the ids it applied and its hourly counts; one written before v16 (camelCase
/// names) with every row, under the PostgreSQL catalog's names.
@Suite struct SQLiteMigrationTests {
    @Test func aV12CatalogKeepsItsExposuresAndHourlyLimits() async throws {
        let hour = Int(Date().timeIntervalSince1970 / 3_600)
        try await withCatalog(
            migratedUpTo: "v12: patches",
            { db in
                for (installation, first) in [(7, hour - 5), (8, hour - 2)] {
                    for row in 0..<3 {
                        try db.execute(
                            sql: "INSERT INTO outcome VALUES (1, 'installed', 'default', 1, ?, ?, 1, 1)",
                            arguments: [first + row, installation])
                    }
                }
                // Only installation 7's exposure was kept: 8's first hour can come only from its outcome rows.
                try db.execute(sql: "INSERT INTO outcomeExposure VALUES (1, 'default', 1, 7, ?)", arguments: [hour - 5])
                try db.execute(
                    sql: "INSERT INTO outcomeQuota VALUES (1, 7, ?, ?)", arguments: [hour, OutcomeBatch.maximumEventsPerHour - 1])
            }
        ) { catalog in
            let flowers = CatalogFixtures.name("flowers")
            let exposures = try await catalog.exposures(of: flowers)[.default] ?? []
            #expect(Set(exposures.map { "\($0.installation)@\($0.hour)" }) == ["7@\(hour - 5)", "8@\(hour - 2)"])
            func batch(installation: Int64, events: Int) -> OutcomeBatchRecord {
                OutcomeBatchRecord(
                    id: OutcomeBatch.makeID(), installation: installation, receivedHour: hour, events: events,
                    totals: [
                        .init(metric: "installed", arm: .default, version: 1, hour: hour, network: 1, count: events, sum: Double(events))
                    ],
                    exposures: [.init(arm: .default, version: 1, hour: hour, network: 1)], appMetrics: [])
            }
            let results = try await catalog.recordOutcomes([
                (flowers, batch(installation: 7, events: 1)), (flowers, batch(installation: 7, events: 1)),
                (flowers, batch(installation: 9, events: 2)),
            ])
            #expect((try? results[0].get()) == true, "the last event of the hour the old catalog counted")
            #expect(throws: DepotError.self, "one more is over the limit") { try results[1].get() }
            #expect((try? results[2].get()) == true)
            let after = try await catalog.exposures(of: flowers)[.default] ?? []
            #expect(
                Set(after.map { "\($0.installation)@\($0.hour)" }) == ["7@\(hour - 5)", "8@\(hour - 2)", "9@\(hour)"],
                "a later batch does not move an installation's first hour")
        }
    }

    @Test func aV14CatalogKeepsItsBatchIdsAndHourlyCountsWithOneIndexKeyedById() async throws {
        let hour = Int(Date().timeIntervalSince1970 / 3_600)
        let applied = OutcomeBatch.makeID(), old8 = OutcomeBatch.makeID()
        try await withCatalog(
            migratedUpTo: "v14: hourly counts in the batch rows",
            { db in
                try db.execute(
                    sql: "INSERT INTO outcomeBatch (modelId, id, hour, installation, events) VALUES (1, ?, ?, 7, ?)",
                    arguments: [applied, hour, OutcomeBatch.maximumEventsPerHour - 1])
                try db.execute(
                    sql: "INSERT INTO outcomeBatch (modelId, id, hour, installation, events) VALUES (1, ?, ?, 8, 1)",
                    arguments: [old8, hour - 200])
            }
        ) { catalog in
            let indexes = try await catalog.database.read { db in
                try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'outcome_batch'")
                    .map { "\($0["name"] as String): \($0["sql"] as String? ?? "")" }
            }
            #expect(
                indexes.sorted() == [
                    #"outcome_batch_by_hour: CREATE INDEX "outcome_batch_by_hour" ON "outcome_batch"("hour")"#,
                    #"outcome_batch_id: CREATE UNIQUE INDEX "outcome_batch_id" ON "outcome_batch"("model_id", "id")"#,
                ],
                "one index keyed by batch id; rows in arrival order (a table with row ids)")
            let flowers = CatalogFixtures.name("flowers")
            func batch(_ id: String, installation: Int64) -> OutcomeBatchRecord {
                OutcomeBatchRecord(
                    id: id, installation: installation, receivedHour: hour, events: 1,
                    totals: [.init(metric: "installed", arm: .default, version: 1, hour: hour, network: 1, count: 1, sum: 1)],
                    exposures: [.init(arm: .default, version: 1, hour: hour, network: 1)], appMetrics: [])
            }
            let results = try await catalog.recordOutcomes([
                (flowers, batch(applied, installation: 9)), (flowers, batch(old8, installation: 8)),
                (flowers, batch(OutcomeBatch.makeID(), installation: 7)),
                (flowers, batch(OutcomeBatch.makeID(), installation: 7)),
            ])
            #expect((try? results[0].get()) == false, "an id applied before v15 is a duplicate")
            #expect((try? results[1].get()) == false)
            #expect((try? results[2].get()) == true, "the last event of the hour the old catalog counted")
            #expect(throws: DepotError.self, "one more is over the limit") { try results[3].get() }

            try await catalog.pruneOutcomes(batchesBefore: hour - 100, rowsBefore: 0)
            let again = try await catalog.recordOutcomes([
                (flowers, batch(old8, installation: 8)), (flowers, batch(applied, installation: 9)),
            ])
            #expect((try? again[0].get()) == true, "a pruned id is forgotten")
            #expect((try? again[1].get()) == false, "a kept one is not")
        }
    }

    @Test func aV15CatalogKeepsEveryRowUnderThePostgreSQLNames() async throws {
        let at = "2026-11-27 00:00:00.000"
        let digest = String(repeating: "b", count: 64), session = String(repeating: "c", count: 64)
        let rollout = String(decoding: try JSONEncoder().encode(Rollout(defaultVersion: 1)), as: UTF8.self)
        let tflite = String(decoding: try JSONEncoder().encode(CatalogFixtures.description), as: UTF8.self)
        try await withCatalog(
            migratedUpTo: "v15: one index keyed by batch id",
            { db in
                for sql in [
                    "UPDATE model SET lastVersionNumber = 2",
                    "UPDATE version SET tflite = '\(tflite)'",
                    "INSERT INTO version (modelId, number, sha256, size, createdAt, publishedAt, published, tflite, uploadedBy) VALUES (1, 2, '\(digest)', 2, '\(at)', '\(at)', 1, '\(tflite)', 'ci')",
                    "INSERT INTO versionFile (versionId, name, sha256, size, position) VALUES (2, 'labels.txt', '\(digest)', 3, 0)",
                    "INSERT INTO versionPatch (versionId, fromVersionId, file, fromSha256, sha256, size) VALUES (2, 1, '', '\(String(repeating: "a", count: 64))', '\(digest)', 1)",
                    "INSERT INTO accessKey (id, kind, name, secretHash, createdAt) VALUES ('k1', 'admin', 'ci', zeroblob(32), '\(at)')",
                    "INSERT INTO consoleSession (id, keyId, startedAt, usedAt) VALUES ('\(session)', 'k1', '\(at)', '\(at)')",
                    "INSERT INTO rollout (modelId, document, updatedAt) VALUES (1, '\(rollout)', '\(at)')",
                    "INSERT INTO rolloutChange (modelId, keyID, at, before, after, reason) VALUES (1, 'k1', '\(at)', '\(rollout)', '\(rollout)', 'why')",
                    "INSERT INTO rolloutGuard (modelId, document, running) VALUES (1, '[]', 0)",
                    "INSERT INTO usage (modelId, version, arm, kind, minute, count) VALUES (1, 2, 'default', 'manifest', 5, 7)",
                    "INSERT INTO armInstallation (modelId, arm, version, installation, minute) VALUES (1, 'default', 2, 9, 5)",
                    "INSERT INTO manifestSequence (name, last) VALUES ('flowers', 3)",
                    "INSERT INTO rootDocument (version, envelope, createdAt) VALUES (1, x'01', '\(at)')",
                    "INSERT INTO outcome (modelId, metric, arm, version, hour, installation, count, sum) VALUES (1, 'installed', 'default', 2, 4, 9, 1, 1)",
                    "INSERT INTO outcomeBatch (modelId, id, hour, installation, events) VALUES (1, 'b1', 4, 9, 1)",
                    "INSERT INTO experimentMetric (modelId, name, kind, direction, tolerance, guardrail, declared) VALUES (1, 'taps', 'sum', 'increase', 0.1, 0, 1)",
                ] {
                    try db.execute(sql: sql)
                }
            }
        ) { catalog in
            let snapshot = try await catalog.snapshot()
            #expect(snapshot.models.map(\.lastVersionNumber) == [2])
            let second = try #require(snapshot.versions.last)
            #expect(second.uploadedBy == "ci" && second.publishedAt != nil && second.files.map(\.name) == ["labels.txt"])
            #expect(snapshot.patches.map { "\($0.fromVersion)→\($0.version) \($0.sha256 ?? "")" } == ["1→2 \(digest)"])
            #expect(snapshot.keys.map(\.key.id) == ["k1"] && snapshot.keys.first?.secretHash == Array(repeating: 0, count: 32))
            #expect(try await catalog.session(id: session)?.keyID == "k1")
            #expect(snapshot.rollouts.map(\.document) == [Rollout(defaultVersion: 1)])
            #expect(snapshot.changes.map { "\($0.keyID) \($0.reason ?? "")" } == ["k1 why"])
            #expect(snapshot.guards.count == 1 && snapshot.usage.map(\.count) == [7])
            #expect(snapshot.installations.map(\.installation) == [9])
            #expect(snapshot.sequences.map { "\($0.name) \($0.last)" } == ["flowers 3"])
            #expect(snapshot.roots.map(\.envelope) == [Data([1])])
            #expect(
                snapshot.outcomes.count == 1 && snapshot.batches.map(\.id) == ["b1"]
                    && snapshot.metrics.map(\.metric.metric.name) == ["taps"])

            try await catalog.database.write { try $0.execute(sql: "DELETE FROM access_key") }
            #expect(try await catalog.session(id: session) == nil, "a session still goes with its key (the foreign key follows the rename)")
            _ = try await catalog.deleteModel(CatalogFixtures.name("flowers"), force: true)
            let left = try await catalog.snapshot()
            #expect(left.versions.isEmpty && left.patches.isEmpty && left.usage.isEmpty && left.outcomes.isEmpty && left.guards.isEmpty)
        }
    }

    /// v17: a model whose guard ended with a webhook delivery still due has work (its retries
    /// go on), and the outcomes stored before exposure tokens count for no network.
    @Test func aV16CatalogsPendingDeliveriesHaveWorkAndItsOutcomesAreUncounted() async throws {
        try await withDatabaseFile { path in
            let old = try DatabasePool(path: path)
            try SQLiteCatalogMigrations.migrator.migrate(old, upTo: "v16: the PostgreSQL catalog's names")
            try await old.write { db in
                for sql in [
                    "INSERT INTO model (name, created_at) VALUES ('flowers', '2026-11-27 00:00:00')",
                    "INSERT INTO model (name, created_at) VALUES ('birds', '2026-11-27 00:00:00')",
                    #"INSERT INTO rollout_guard (model_id, document, running) VALUES (1, '[{"delivery":{"nextAttempt":1}}]', 0)"#,
                    #"INSERT INTO rollout_guard (model_id, document, running) VALUES (2, '[{"delivery":{"delivered":1}}]', 0)"#,
                    "INSERT INTO outcome (model_id, metric, arm, version, hour, installation, count, sum) VALUES (1, 'installed', 'default', 1, 4, 9, 1, 1)",
                ] {
                    try db.execute(sql: sql)
                }
            }
            try old.close()
            let catalog = try SQLiteModelCatalog(path: path)
            #expect(try await catalog.modelsWithGuardWork().map(\.rawValue) == ["flowers"], "the delivery still due, not the delivered one")
            let rows = try await catalog.outcomes(of: CatalogFixtures.name("flowers"))["installed"]?[.default] ?? []
            #expect(rows.map(\.network) == [0])
        }
    }

    @Test func aNewCatalogHasThePostgreSQLCatalogsTablesInSnakeCase() async throws {
        let names = try await withDatabaseFile { path in
            try await SQLiteModelCatalog(path: path).database.read { db in
                let tables = try String.fetchAll(
                    db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'grdb_%'")
                let indexes = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
                let columns = try tables.flatMap { table in try db.columns(in: table).map { "\(table).\($0.name)" } }
                return (tables: tables, all: tables + indexes + columns)
            }
        }
        let postgres = Set(
            PostgresCatalogMigrations.migrations.flatMap(\.statements).compactMap { statement in
                statement.firstMatch(of: /CREATE TABLE (\w+)/).map { String($0.1) }
            })
        #expect(names.tables.count >= 16)
        #expect(names.all.filter { $0.contains(/[A-Z]/) } == [], "snake_case, as the PostgreSQL catalog names them")
        #expect(Set(names.tables).subtracting(postgres) == [], "every table has a PostgreSQL table of the same name")
    }

    @Test func aCatalogFromANewerDepotIsRefusedUnchanged() async throws {
        try await withDatabaseFile { path in
            try await SQLiteModelCatalog(path: path).database.write { db in
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from the future')")
                try db.execute(sql: "ALTER TABLE model RENAME TO model_of_the_future")
            }
            let error = #expect(throws: DepotError.self) { try SQLiteModelCatalog(path: path) }
            #expect(
                error?.message.contains("has schema changes from a newer depot (v99: from the future)") == true,
                "\(String(describing: error))")
            #expect(error?.message.contains("Run the newer depot") == true)
            let tables = try await DatabaseQueue(path: path).read { db in
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE name LIKE 'model%'")
            }
            #expect(tables == ["model_of_the_future"], "nothing was migrated or created")
        }
    }

    /// A catalog file migrated up to `migration`, holding model `flowers` (id 1) with version 1 and
    /// the rows `fill` writes, then opened as the catalog (every later migration applied).
    func withCatalog(
        migratedUpTo migration: String, _ fill: @escaping @Sendable (Database) throws -> Void,
        _ body: (SQLiteModelCatalog) async throws -> Void
    ) async throws {
        try await withDatabaseFile { path in
            let old = try DatabasePool(path: path)
            try SQLiteCatalogMigrations.migrator.migrate(old, upTo: migration)
            try await old.write { db in
                try db.execute(sql: "INSERT INTO model (name, createdAt) VALUES ('flowers', '2026-11-27 00:00:00')")
                try db.execute(
                    sql: """
                        INSERT INTO version (modelId, number, sha256, size, createdAt, tflite) VALUES (1, 1, '\(String(repeating: "a", count: 64))', 1, '2026-11-27 00:00:00', '{}')
                        """)
                try fill(db)
            }
            try old.close()
            try await body(try SQLiteModelCatalog(path: path))
        }
    }

    /// Runs `body` with the path of a catalog file in a directory of its own, removed afterwards.
    func withDatabaseFile<T>(_ body: (String) async throws -> T) async throws -> T {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("depot-migration-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: storage, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: storage) }
        return try await body(storage + "/depot.sqlite")
    }
}
