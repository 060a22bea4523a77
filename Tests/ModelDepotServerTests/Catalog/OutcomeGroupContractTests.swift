import Foundation
import ModelDepotShared
import Testing

@testable import ModelDepotServer

/// A group of outcome batches sent together is applied as if the batches came one by one, in
/// order: each is refused alone, and what one refused batch would have counted (its events, its
/// metric names) does not count against those after it. PostgreSQL applies a group with one
/// statement per step for all its batches; SQLite one batch after another.
@Suite struct OutcomeGroupContractTests {
    typealias F = CatalogFixtures
    let flowers = F.name("flowers")
    let hour = 500_000

    func batch(_ id: Int, installation: Int64, events: Int = 1, version: Int = 1, metrics: [String] = []) -> OutcomeBatchRecord {
        let totals =
            [OutcomeBatchRecord.Total(metric: "installed", arm: .default, version: version, hour: hour, network: 1, count: 1, sum: 1)]
            + metrics.map { .init(metric: $0, arm: .default, version: version, hour: hour, network: 1, count: 1, sum: 2) }
        return OutcomeBatchRecord(
            id: String(format: "00000000-0000-4000-8000-%012d", id), installation: installation, receivedHour: hour, events: events,
            totals: totals, exposures: [.init(arm: .default, version: version, hour: hour, network: 1)], appMetrics: Set(metrics))
    }

    /// `true`/`false` for an applied batch or a duplicate, the error's code for a refusal.
    func answers(_ results: [Result<Bool, DepotError>]) -> [String] {
        results.map { result in
            switch result {
            case .success(let applied): String(applied)
            case .failure(let error): error.code.rawValue
            }
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func aGroupIsAppliedAsIfOneByOne(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.createModel(ModelCreation(name: flowers), at: F.instant)
            _ = try await catalog.addVersion(F.upload("a"), to: flowers, publish: true, at: F.instant)
            let limit = OutcomeBatch.maximumEventsPerHour, undeclared = ExperimentMetric.maximumUndeclared
            let names = (0..<undeclared).map { "m\($0)" }
            let group: [(model: ModelName, batch: OutcomeBatchRecord)] = [
                (flowers, batch(1, installation: 1, events: limit / 2)),
                (flowers, batch(2, installation: 1, events: limit / 2 + 1)),  // past the hour's limit after batch 1
                (flowers, batch(3, installation: 1, events: limit / 2)),  // exactly the limit: batch 2 did not count
                (flowers, batch(1, installation: 1, events: limit / 2)),  // batch 1 again
                (flowers, batch(4, installation: 2, version: 9)),  // no version 9
                (flowers, batch(4, installation: 2, version: 9)),  // refused again, not a duplicate
                (flowers, batch(5, installation: 3, metrics: names)),  // every undeclared name there may be
                (flowers, batch(6, installation: 4, events: limit, metrics: ["late"])),  // one more; its events do not count
                (flowers, batch(7, installation: 4, metrics: ["m3"])),  // a name batch 5 added
                (F.name("birds"), batch(8, installation: 5)),  // no such model
                (flowers, batch(9, installation: 6)),
                (flowers, batch(10, installation: 6)),  // the same rows as batch 9
            ]
            let results = try await catalog.recordOutcomes(group)
            #expect(
                answers(results) == [
                    "true", "too_many_requests", "true", "false", "invalid_events", "invalid_events", "true",
                    "invalid_metric", "true", "not_found", "true", "true",
                ])

            let installed = try await catalog.outcomes(of: flowers)["installed"]?[.default] ?? []
            let counts = Dictionary(installed.map { ($0.installation, $0.count) }, uniquingKeysWith: +)
            #expect(counts == [1: 2, 3: 1, 4: 1, 6: 2], "batches 1 and 3, 5, 7, 9 and 10; nothing of a refused batch")
            #expect(try await catalog.outcomes(of: flowers)["m3"]?[.default]?.map(\.installation).sorted() == [3, 4])
            #expect(try await catalog.outcomes(of: flowers)["late"] == nil)
            let metrics = try await catalog.appMetrics(of: flowers)
            #expect(Set(metrics.map(\.metric.name)) == Set(names) && metrics.allSatisfy { !$0.declared })
            #expect(try await Set(catalog.exposures(of: flowers)[.default]?.map(\.installation) ?? []) == [1, 3, 4, 6])

            // What was counted is kept: installation 1 is at the limit; refused ids are free.
            let after = try await catalog.recordOutcomes([
                (flowers, batch(11, installation: 1)), (flowers, batch(2, installation: 7)),
                (flowers, batch(4, installation: 2)), (flowers, batch(6, installation: 4, metrics: ["m0"])),
            ])
            #expect(answers(after) == ["too_many_requests", "true", "true", "true"])
        }
    }
}
