import Foundation
import GRDB
import ModelDepotShared
import Testing

@testable import ModelDepotServer

/// The SQLite catalog counts an installation's events per hour in memory, from the batches' own
/// rows: the limit holds after the catalog is opened again, and when another connection (another
/// process) writes batches to the same file.
@Suite struct SQLiteHourlyEventsTests {
    private let hour = Int(Date().timeIntervalSince1970 / 3_600)
    private let flowers = CatalogFixtures.name("flowers")

    private func batch(installation: Int64, events: Int, hour: Int? = nil) -> OutcomeBatchRecord {
        let hour = hour ?? self.hour
        return OutcomeBatchRecord(
            id: OutcomeBatch.makeID(), installation: installation, receivedHour: hour, events: events,
            totals: [.init(metric: "installed", arm: .default, version: 1, hour: hour, network: 1, count: events, sum: Double(events))],
            exposures: [.init(arm: .default, version: 1, hour: hour, network: 1)], appMetrics: [])
    }

    private func applied(_ catalog: SQLiteModelCatalog, _ batch: OutcomeBatchRecord) async throws -> Bool {
        let results = try await catalog.recordOutcomes([(flowers, batch)])
        return (try? results[0].get()) == true
    }

    private func withStorage(_ body: (String) async throws -> Void) async throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("depot-hourly-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: storage, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: storage) }
        let path = storage + "/depot.sqlite"
        let catalog = try SQLiteModelCatalog(path: path)
        _ = try await catalog.createModel(ModelCreation(name: flowers), at: CatalogFixtures.instant)
        _ = try await catalog.addVersion(CatalogFixtures.upload("a"), to: flowers, publish: true, at: CatalogFixtures.instant)
        try await body(path)
    }

    @Test func theLimitHoldsAfterTheCatalogIsOpenedAgain() async throws {
        try await withStorage { path in
            let limit = OutcomeBatch.maximumEventsPerHour
            let first = try SQLiteModelCatalog(path: path)
            #expect(try await applied(first, batch(installation: 7, events: limit - 1)))
            #expect(try await applied(first, batch(installation: 7, events: 1, hour: hour - 1)), "another hour counts apart")
            #expect(try await applied(first, batch(installation: 8, events: limit)), "another installation counts apart")

            let reopened = try SQLiteModelCatalog(path: path)
            #expect(
                try await applied(reopened, batch(installation: 7, events: 2)) == false, "one over the limit, read from the batches' rows")
            #expect(try await applied(reopened, batch(installation: 7, events: 1)))
            #expect(try await applied(reopened, batch(installation: 7, events: 1)) == false)
            #expect(try await applied(reopened, batch(installation: 8, events: 1)) == false)
            #expect(try await applied(reopened, batch(installation: 7, events: limit - 1, hour: hour - 1)))
        }
    }

    @Test func batchesAnotherConnectionWritesCount() async throws {
        try await withStorage { path in
            let limit = OutcomeBatch.maximumEventsPerHour
            let one = try SQLiteModelCatalog(path: path)
            let other = try SQLiteModelCatalog(path: path)
            #expect(try await applied(one, batch(installation: 7, events: limit - 1)))
            #expect(try await applied(other, batch(installation: 7, events: 1)), "the other connection reads the first one's batch")
            #expect(
                try await applied(one, batch(installation: 7, events: 1)) == false,
                "the first connection sees that the file changed and reads the other's batch")
            #expect(try await applied(other, batch(installation: 7, events: 1)) == false)
        }
    }

    @Test func refusedAndRepeatedBatchesDoNotCount() async throws {
        try await withStorage { path in
            let limit = OutcomeBatch.maximumEventsPerHour
            let catalog = try SQLiteModelCatalog(path: path)
            var unknownVersion = batch(installation: 7, events: limit)
            unknownVersion.totals[0].version = 9
            unknownVersion.exposures[0].version = 9
            let sent = batch(installation: 7, events: limit - 1)
            let results = try await catalog.recordOutcomes([(flowers, unknownVersion), (flowers, sent), (flowers, sent)])
            #expect(throws: DepotError.self, "a version the model does not have") { try results[0].get() }
            #expect((try? results[1].get()) == true)
            #expect((try? results[2].get()) == false, "the same batch again is a duplicate, not counted twice")
            #expect(try await applied(catalog, batch(installation: 7, events: 1)))
            #expect(try await applied(try SQLiteModelCatalog(path: path), batch(installation: 7, events: 1)) == false)
        }
    }
}
