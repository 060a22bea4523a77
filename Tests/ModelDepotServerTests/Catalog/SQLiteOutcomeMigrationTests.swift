import Foundation
import GRDB
import ModelDepotShared
import Testing

@testable import ModelDepotServer

/// A catalog written before v13 (exposures kept in their own table, the hourly limit keyed by
/// installation) opens with the same exposures, read from the outcome rows, and the same limits;
/// one written before v15 (batch rows keyed by id) keeps the ids it applied and its hourly counts.
@Suite struct SQLiteOutcomeMigrationTests {
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
                    totals: [.init(metric: "installed", arm: .default, version: 1, hour: hour, count: events, sum: Double(events))],
                    exposures: [.init(arm: .default, version: 1, hour: hour)], appMetrics: [])
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
                try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'outcomeBatch'")
                    .map { "\($0["name"] as String): \($0["sql"] as String? ?? "")" }
            }
            #expect(
                indexes.sorted() == [
                    #"outcomeBatch_by_hour: CREATE INDEX "outcomeBatch_by_hour" ON "outcomeBatch"("hour")"#,
                    #"outcomeBatch_id: CREATE UNIQUE INDEX "outcomeBatch_id" ON "outcomeBatch"("modelId", "id")"#,
                ],
                "one index keyed by batch id; rows in arrival order (a table with row ids)")
            let flowers = CatalogFixtures.name("flowers")
            func batch(_ id: String, installation: Int64) -> OutcomeBatchRecord {
                OutcomeBatchRecord(
                    id: id, installation: installation, receivedHour: hour, events: 1,
                    totals: [.init(metric: "installed", arm: .default, version: 1, hour: hour, count: 1, sum: 1)],
                    exposures: [.init(arm: .default, version: 1, hour: hour)], appMetrics: [])
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

            try await catalog.pruneOutcomeBatches(beforeHour: hour - 100)
            let again = try await catalog.recordOutcomes([
                (flowers, batch(old8, installation: 8)), (flowers, batch(applied, installation: 9)),
            ])
            #expect((try? again[0].get()) == true, "a pruned id is forgotten")
            #expect((try? again[1].get()) == false, "a kept one is not")
        }
    }

    /// A catalog file migrated up to `migration`, holding model `flowers` (id 1) with version 1 and
    /// the rows `fill` writes, then opened as the catalog (every later migration applied); its
    /// directory is removed afterwards.
    func withCatalog(
        migratedUpTo migration: String, _ fill: @escaping @Sendable (Database) throws -> Void,
        _ body: (SQLiteModelCatalog) async throws -> Void
    ) async throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("depot-migration-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: storage, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: storage) }
        let path = storage + "/depot.sqlite"
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
