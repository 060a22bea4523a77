import Foundation
import ModelDepotShared
import NIOConcurrencyHelpers
import Testing

@testable import ModelDepotServer

/// The writer's groups on a real catalog of each kind: every batch sent at once is answered with
/// its own result (more than a group holds, a batch sent twice, a refused one among them), a
/// batch after the writer went idle starts it again, and each group is one of the catalog's
/// transactions, answered before the next is written.
@Suite struct OutcomeWriterTests {
    static let flowers = CatalogFixtures.name("flowers")

    static func batch(_ installation: Int64, id: String = UUID().uuidString.lowercased(), version: Int = 1) -> OutcomeBatchRecord {
        OutcomeBatchRecord(
            id: id, installation: installation, receivedHour: 500_000, events: 1,
            totals: [.init(metric: "installed", arm: .default, version: version, hour: 500_000, network: 1, count: 1, sum: 1)],
            exposures: [.init(arm: .default, version: version, hour: 500_000, network: 1)], appMetrics: [])
    }

    static func withModel(_ backend: CatalogBackend, _ body: (any ModelCatalog) async throws -> Void) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.createModel(ModelCreation(name: flowers), at: CatalogFixtures.instant)
            _ = try await catalog.addVersion(CatalogFixtures.upload("a"), to: flowers, publish: true, at: CatalogFixtures.instant)
            try await body(catalog)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func batchesSentAtOnceAreEachAnsweredWithTheirOwnResult(_ backend: CatalogBackend) async throws {
        try await Self.withModel(backend) { (catalog: any ModelCatalog) async throws in
            let flowers = Self.flowers
            let writer = OutcomeWriter(catalog: catalog)

            // More batches than one group holds, one id twice, one version the model does not have.
            let distinct = writer.groupSize + 100
            let twice = UUID().uuidString.lowercased()
            let sent =
                (0..<Int64(distinct)).map { Self.batch($0) }
                + [Self.batch(9_000, id: twice), Self.batch(9_000, id: twice), Self.batch(9_001, version: 9)]
            let results = await withTaskGroup(of: (Int, Result<Bool, any Error>).self) { group in
                for (index, record) in sent.enumerated() {
                    group.addTask {
                        do { return (index, .success(try await writer.record(record, of: flowers))) } catch {
                            return (index, .failure(error))
                        }
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
            #expect(
                try await catalog.outcomes(of: flowers)["installed"]?[.default]?.count == distinct + 1,
                "one row per installation applied: the refused batch left none")

            // The writer stopped once none was waiting; the next batch starts it again.
            #expect(try await writer.record(Self.batch(9_002), of: flowers))
            #expect(try await catalog.outcomes(of: flowers)["installed"]?[.default]?.count == distinct + 2)
        }
    }

    /// What the writer did, in order: a group handed to the catalog (its size), or a batch answered.
    enum Step {
        case applying(Int)
        case answered
    }

    /// PostgreSQL commits 128 batches a transaction: a burst of more is answered transaction by
    /// transaction, not once the last one commits (the writer's groups had been 1,024 for both).
    @Test(arguments: CatalogBackend.allCases)
    func eachGroupIsOneTransactionAnsweredBeforeTheNextIsWritten(_ backend: CatalogBackend) async throws {
        try await Self.withModel(backend) { (catalog: any ModelCatalog) async throws in
            let size = catalog.outcomesPerTransaction
            let steps = NIOLockedValueBox<[Step]>([])
            // The first group waits until the whole burst is submitted, so the rest is queued when
            // it is answered, however slowly the loop below ran on a busy machine.
            let burst = AsyncStream<Void>.makeStream()
            let first = NIOLockedValueBox(true)
            let writer = OutcomeWriter(groupSize: size) { batches in
                steps.withLockedValue { $0.append(.applying(batches.count)) }
                if first.withLockedValue({ isFirst in
                    defer { isFirst = false }
                    return isFirst
                }) {
                    for await _ in burst.stream {}
                }
                return try await catalog.recordOutcomes(batches)
            }
            let count = 2 * size + 5
            let answered = await withCheckedContinuation { (done: CheckedContinuation<Int, Never>) in
                let applied = NIOLockedValueBox(0)
                for installation in 0..<Int64(count) {
                    // Without an event loop the completion runs on the writing task, before its next group.
                    writer.submit(Self.batch(installation), of: Self.flowers, on: nil) { result in
                        steps.withLockedValue { $0.append(.answered) }
                        let total = applied.withLockedValue { total in
                            if (try? result.get()) == true { total += 1 }
                            return total
                        }
                        if installation == count - 1 { done.resume(returning: total) }
                    }
                }
                burst.continuation.finish()
            }
            #expect(answered == count, "every batch of the burst applied")
            let taken = steps.withLockedValue { $0 }
            let sizes = taken.compactMap { if case .applying(let n) = $0 { n } else { nil } }
            #expect(
                sizes.reduce(0, +) == count && sizes.allSatisfy { $0 <= size } && sizes.contains(size),
                "groups of at most one transaction (\(size)), full ones among them: \(sizes)")
            var owed = 0
            for step in taken {
                switch step {
                case .applying(let n):
                    #expect(owed == 0, "a group is written only after the one before was answered")
                    owed = n
                case .answered:
                    owed -= 1
                }
            }
        }
    }
}
