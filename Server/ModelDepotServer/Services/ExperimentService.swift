import Foundation
import ModelDepotRollouts
import ModelDepotShared
import NIOCore

/// Outcomes from devices and the results they make: ingestion, the app's metrics, and each arm's
/// versions compared with its control version.
struct ExperimentService {
    let catalog: any ModelCatalog
    let writer: OutcomeWriter
    let clock: @Sendable () -> Date

    init(catalog: any ModelCatalog, clock: @escaping @Sendable () -> Date) {
        self.catalog = catalog
        writer = OutcomeWriter(catalog: catalog)
        self.clock = clock
    }

    /// Reads and checks a batch's body, sent for `model` with `key`: the SDK's plain JSON with
    /// ``OutcomeBatchReader``, anything else with `JSONDecoder` (whose errors say what is wrong).
    /// The one reading of a batch, for the route and the fast path.
    /// - Throws: ``DepotError``: `forbidden`, `bad_request`, `invalid_events`.
    func accept(_ body: ByteBuffer, of model: ModelName, key: AccessKey) throws -> OutcomeBatchRecord {
        try key.checkMayRead(model)
        let batch = try body.withUnsafeReadableBytes(OutcomeBatchReader.read) ?? JSONBody.decode(OutcomeBatch.self, from: body)
        return try batch.record(now: clock())
    }

    /// Stores an accepted batch with the others waiting (``OutcomeWriter``).
    /// - Returns: The receipt: how many events were applied, or that the batch was applied before.
    /// - Throws: ``DepotError``: `too_many_requests`, `not_found`.
    func ingest(_ record: OutcomeBatchRecord, of model: ModelName) async throws -> OutcomeReceipt {
        record.receipt(applied: try await writer.record(record, of: model))
    }

    /// ``ingest(_:of:)`` without a task, for an event loop: `completion` runs on `eventLoop`.
    func ingest(
        _ record: OutcomeBatchRecord, of model: ModelName, on eventLoop: any EventLoop,
        completion: @escaping @Sendable (Result<OutcomeReceipt, any Error>) -> Void
    ) {
        writer.submit(record, of: model, on: eventLoop) { result in completion(result.map { record.receipt(applied: $0) }) }
    }

    /// The model-health metrics, then the app's (declared or recorded).
    func metrics(of model: ModelName) async throws -> [ExperimentMetric] {
        ExperimentMetric.health + (try await catalog.appMetrics(of: model)).map(\.metric)
    }

    /// Declares an app metric; a model-health metric's name is refused.
    func declare(_ metric: ExperimentMetric, of model: ModelName) async throws {
        guard ExperimentMetric.Health(rawValue: metric.name) == nil else {
            throw DepotError(
                .invalidMetric,
                "'\(metric.name)' is a model-health metric the SDK records by itself; choose another name for an app metric.")
        }
        try await catalog.declareMetric(metric, of: model)
    }

    func remove(metric name: String, of model: ModelName) async throws {
        try await catalog.removeMetric(named: name, of: model)
    }

    /// Every arm that handed out more than one version, each metric's versions against the arm's
    /// control (its oldest version that reported).
    func results(of model: ModelName) async throws -> ExperimentResults {
        let metrics = try await self.metrics(of: model)
        let exposures = try await catalog.exposures(of: model).filter { Set($0.value.map(\.version)).count > 1 }
        let rollout = try await catalog.rollout(of: model)
        var arms: [ExperimentResults.Arm] = []
        let rowsByMetric = exposures.isEmpty ? [:] : try await catalog.outcomes(of: model)
        for (arm, seen) in exposures.sorted(by: { $0.key < $1.key }) {
            let installations = Dictionary(grouping: seen, by: \.version).mapValues(\.count)
            let control = installations.keys.min() ?? 0
            let rule: Rollout.Rule? = if case .rule(let id) = arm { rollout.rules.first { $0.id == id } } else { nil }
            let sampleRatio = rule.map { SampleRatioCheck(rule: $0.id, name: $0.name, shares: $0.split.shares, observed: installations) }
            let results = metrics.map { metric in
                ExperimentComparison(
                    metric: metric, control: control,
                    series: OutcomeSeries(kind: metric.kind, rows: rowsByMetric[metric.name]?[arm] ?? [], exposures: seen)
                )
                .result
            }
            arms.append(
                ExperimentResults.Arm(
                    arm: arm.stored, name: rule?.name, control: control,
                    installations: Dictionary(uniqueKeysWithValues: installations.map { ("\($0.key)", $0.value) }),
                    sampleRatio: sampleRatio, metrics: results))
        }
        return ExperimentResults(model: model, generated: clock(), metrics: metrics, arms: arms)
    }
}
