import Foundation
import GRDB
import ModelDepotShared
import Synchronization
import Testing

@testable import ModelDepotServer

/// The installations each arm handed versions to, as ``UsageCounter`` writes them to a real
/// SQLite catalog: many in several transactions (the counts once), and one written is not sent
/// again with every flush for an hour.
@Suite struct UsageCounterTests {
    @Test func installationsAreWrittenInPartsAndNotSentAgainForAnHour() async throws {
        try await CatalogBackend.sqlite.withCatalog { catalog in try await writtenInParts(try #require(catalog as? SQLiteModelCatalog)) }
    }

    func writtenInParts(_ catalog: SQLiteModelCatalog) async throws {
        let flowers = CatalogFixtures.name("flowers")
        _ = try await catalog.createModel(ModelCreation(name: flowers), at: CatalogFixtures.instant)
        _ = try await catalog.addVersion(CatalogFixtures.upload("a"), to: flowers, publish: true, at: CatalogFixtures.instant)
        let now = Mutex(Date())
        let usage = UsageCounter(identifiers: try IdentifierKey(secret: IdentifierKey.newSecret()), clock: { now.withLock { $0 } })
        let devices = (0..<(UsageCounter.installationsPerWrite * 2 + 500)).map { "device-\($0)" }
        func seeAll(_ ids: [String]) {
            for id in ids {
                usage.record(installation: id, model: flowers, version: 1, arm: .default)
                usage.record(.manifest(model: flowers, version: 1), arm: .default)
            }
        }
        func stored() async throws -> Int {
            try await catalog.installations(of: flowers, sinceMinute: 0).reduce(0) { $0 + $1.count }
        }
        func manifests() async throws -> Int {
            try await catalog.usage(of: flowers, sinceMinute: 0).reduce(0) { $0 + $1.count }
        }

        seeAll(devices)
        try await usage.flush(to: catalog)
        #expect(try await stored() == devices.count, "every installation, in three transactions")
        #expect(try await manifests() == devices.count, "the counts once, with the first")

        // Taken away behind the counter's back: what it sends again comes back.
        try await catalog.database.write { try $0.execute(sql: "DELETE FROM arm_installation") }
        seeAll(devices + ["device-new"])
        try await usage.flush(to: catalog)
        #expect(try await stored() == 1, "only the installation not written before is sent")
        #expect(try await manifests() == devices.count * 2 + 1, "every manifest is counted")

        now.withLock { $0 += UsageCounter.writtenMemory }
        seeAll(Array(devices.prefix(10)))
        try await usage.flush(to: catalog)
        #expect(try await stored() == 11, "after an hour, installations seen again are sent again")
    }
}
