import ModelDepotShared
import Testing

@testable import ModelDepotServer

/// The admission rules alone, in order over one transaction's batches of a model.
struct OutcomeAdmissionTests {
    let flowers = try! ModelName("flowers")

    func batch(_ id: String, installation: Int64 = 7, events: Int, version: Int = 1, metrics: Set<String> = []) -> OutcomeBatchRecord {
        OutcomeBatchRecord(
            id: id, installation: installation, receivedHour: 500_000, events: events, totals: [],
            exposures: [.init(arm: .default, version: version, hour: 500_000, network: 1)], appMetrics: metrics)
    }

    func admission(undeclared: Int = 0) -> OutcomeAdmission {
        OutcomeAdmission(model: flowers, versions: [1, 2], metrics: ["load_failed"], undeclared: undeclared)
    }

    @Test func theHourlyLimitCountsWhatWasSentBeforeAndWhatThisTransactionAdmitted() throws {
        var admission = admission()
        let limit = OutcomeBatch.maximumEventsPerHour
        _ = try admission.admit(batch("a", events: 1_000), sentBefore: limit - 3_000)
        _ = try admission.admit(batch("b", installation: 8, events: 5_000), sentBefore: 0)
        let refused = #expect(throws: DepotError.self) { try admission.admit(batch("c", events: 2_001), sentBefore: limit - 3_000) }
        #expect(refused?.code == .tooManyRequests)
        _ = try admission.admit(batch("d", events: 2_000), sentBefore: limit - 3_000)
        #expect(admission.admitted == [.init(installation: 7, hour: 500_000): 3_000, .init(installation: 8, hour: 500_000): 5_000])
    }

    @Test func aBatchRefusedForItsMetricsCountsNoEventsAndAddsNoNames() throws {
        var admission = admission(undeclared: ExperimentMetric.maximumUndeclared - 1)
        #expect(try admission.admit(batch("a", events: 10, metrics: ["accepted"]), sentBefore: 0) == ["accepted"])
        let refused = #expect(throws: DepotError.self) {
            try admission.admit(batch("b", events: 10, metrics: ["shared", "opened"]), sentBefore: 0)
        }
        #expect(refused?.code == .invalidMetric, "the service stores the batch again without the names (OutcomeIngestionAPITests)")
        #expect(admission.admitted.values.reduce(0, +) == 10, "the refused batch's events are not counted")
        #expect(admission.metrics == ["load_failed", "accepted"] && admission.undeclared == ExperimentMetric.maximumUndeclared)
        #expect(try admission.admit(batch("c", events: 10, metrics: ["accepted"]), sentBefore: 0).isEmpty, "a name added before is known")
    }

    @Test func aVersionTheModelLacksIsRefusedFirst() {
        var admission = admission()
        let refused = #expect(throws: DepotError.self) {
            try admission.admit(batch("a", events: OutcomeBatch.maximumEventsPerHour + 1, version: 3), sentBefore: 0)
        }
        #expect(refused?.code == .invalidEvents && refused?.message.contains("version 3") == true)
        #expect(admission.admitted.isEmpty)
    }
}
