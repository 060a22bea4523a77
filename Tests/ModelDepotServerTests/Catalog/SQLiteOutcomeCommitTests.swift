import Foundation
import GRDB
import ModelDepotShared
import Testing

@testable import ModelDepotServer

/// Outcome batches and usage flushes commit without waiting for the disk; every other write of the
/// SQLite catalog still waits for it (`synchronous=FULL`), whether the batches were applied or refused.
@Suite struct SQLiteOutcomeCommitTests {
    @Test func outcomeBatchesLeaveTheCatalogsOtherWritesWaitingForTheDisk() async throws {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("depot-commit-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: storage, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: storage) }
        let catalog = try SQLiteModelCatalog(path: storage + "/depot.sqlite")
        let flowers = CatalogFixtures.name("flowers")
        _ = try await catalog.createModel(ModelCreation(name: flowers), at: CatalogFixtures.instant)
        _ = try await catalog.addVersion(CatalogFixtures.upload("a"), to: flowers, publish: true, at: CatalogFixtures.instant)
        func batch(version: Int) -> OutcomeBatchRecord {
            OutcomeBatchRecord(
                id: UUID().uuidString.lowercased(), installation: 7, receivedHour: 500_000, events: 1,
                totals: [.init(metric: "installed", arm: .default, version: version, hour: 500_000, network: 1, count: 1, sum: 1)],
                exposures: [.init(arm: .default, version: version, hour: 500_000, network: 1)], appMetrics: [])
        }
        func synchronous() async throws -> Int? {
            try await catalog.database.write { try Int.fetchOne($0, sql: "PRAGMA synchronous") }
        }
        #expect(try await synchronous() == 2, "FULL before (GRDB turns WAL on with NORMAL; the catalog sets FULL after it)")

        let results = try await catalog.recordOutcomes([(flowers, batch(version: 1)), (flowers, batch(version: 9))])
        #expect((try? results[0].get()) == true)
        #expect(throws: DepotError.self) { try results[1].get() }
        #expect(try await synchronous() == 2, "FULL again after a group with an applied and a refused batch")
        #expect(try await catalog.outcomes(of: flowers)["installed"]?[.default]?.count == 1, "the applied batch is kept")

        let seen = UsageCounter.Installation(model: flowers, arm: .default, version: 1, installation: 7)
        try await catalog.recordUsage(
            [.init(subject: .manifest(model: flowers, version: 1), arm: .default, minute: 1): 1], installations: [seen: 1])
        #expect(try await synchronous() == 2, "FULL again after a usage flush")
        #expect(try await catalog.installations(of: flowers, sinceMinute: 0).map(\.count) == [1], "the flush is kept")
    }
}
