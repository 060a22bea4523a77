import Foundation
@testable import ModelDepotServer
import ModelDepotShared
import Testing

/// The writer's groups on a real catalog of each kind: every batch sent at once is answered with
/// its own result (more than a group holds, a batch sent twice, a refused one among them), and a
/// batch after the writer went idle starts it again.
@Suite struct OutcomeWriterTests {
    @Test(arguments: CatalogBackend.allCases)
    func batchesSentAtOnceAreEachAnsweredWithTheirOwnResult(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let flowers = CatalogFixtures.name("flowers")
            _ = try await catalog.createModel(ModelCreation(name: flowers), at: CatalogFixtures.instant)
            _ = try await catalog.addVersion(CatalogFixtures.upload("a"), to: flowers, publish: true, at: CatalogFixtures.instant)
            let writer = OutcomeWriter(catalog: catalog)
            func batch(_ installation: Int64, id: String = UUID().uuidString.lowercased(), version: Int = 1) -> OutcomeBatchRecord {
                OutcomeBatchRecord(id: id, installation: installation, receivedHour: 500_000, events: 1,
                                   totals: [.init(metric: "installed", arm: .default, version: version, hour: 500_000, count: 1, sum: 1)],
                                   exposures: [.init(arm: .default, version: version, hour: 500_000)], appMetrics: [])
            }

            // More batches than one group holds, one id twice, one version the model does not have.
            let distinct = OutcomeWriter.groupSize + 100
            let twice = UUID().uuidString.lowercased()
            let sent = (0..<Int64(distinct)).map { batch($0) } + [batch(9_000, id: twice), batch(9_000, id: twice), batch(9_001, version: 9)]
            let results = await withTaskGroup(of: (Int, Result<Bool, any Error>).self) { group in
                for (index, record) in sent.enumerated() {
                    group.addTask {
                        do { return (index, .success(try await writer.record(record, of: flowers))) } catch { return (index, .failure(error)) }
                    }
                }
                var results: [Int: Result<Bool, any Error>] = [:]
                for await (index, result) in group { results[index] = result }
                return results
            }
            #expect(results.count == sent.count, "every batch is answered")
            #expect((0..<distinct).allSatisfy { (try? results[$0]?.get()) == true }, "each distinct batch is applied")
            let sameID = [distinct, distinct + 1].compactMap { try? results[$0]?.get() }.sorted { !$0 && $1 }
            #expect(sameID == [false, true], "a batch sent twice at once is applied once and answered as a duplicate once")
            #expect(throws: DepotError.self) { try results[distinct + 2]?.get() }
            #expect(try await catalog.outcomes(of: flowers)["installed"]?[.default]?.count == distinct + 1,
                    "one row per installation applied: the refused batch left none")

            // The writer stopped once none was waiting; the next batch starts it again.
            #expect(try await writer.record(batch(9_002), of: flowers))
            #expect(try await catalog.outcomes(of: flowers)["installed"]?[.default]?.count == distinct + 2)
        }
    }
}
