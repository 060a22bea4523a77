import Foundation
import ModelDepotRollouts
import ModelDepotShared
import NIOCore

/// Outcomes from devices and the results they make: ingestion, the app's metrics, and each arm's
/// versions compared with its control version.
struct ExperimentService {
    let catalog: any ModelCatalog
    let writer: OutcomeWriter
    /// Checks exposure tokens and names client networks.
    let signer: ManifestSigner
    let budget: NetworkBudget
    let prefixes: NetworkPrefixes
    let identifiers: IdentifierKey
    let clock: @Sendable () -> Date

    init(
        catalog: any ModelCatalog, signer: ManifestSigner, budget: NetworkBudget, prefixes: NetworkPrefixes,
        identifiers: IdentifierKey, clock: @escaping @Sendable () -> Date
    ) {
        self.catalog = catalog
        writer = OutcomeWriter(catalog: catalog)
        self.signer = signer
        self.budget = budget
        self.prefixes = prefixes
        self.identifiers = identifiers
        self.clock = clock
    }

    /// Reads and checks a batch's body, sent for `model` with `key` from the client `address`:
    /// the SDK's plain JSON with ``OutcomeBatchReader``, anything else with `JSONDecoder` (whose
    /// errors say what is wrong). The one reading of a batch, for the route and the fast path.
    ///
    /// The exposure token of each version and arm is checked once (``ExposureToken``): the events
    /// of one that does not check are refused alone. Events with a token count for the address's
    /// network (``ClientNetwork``) while the installation is within the network's hourly
    /// installations (``NetworkBudget``).
    /// - Throws: ``DepotError``: `forbidden`, `bad_request`, `invalid_events`.
    func accept(_ body: ByteBuffer, of model: ModelName, key: AccessKey, from address: String?) throws -> OutcomeBatchRecord {
        try key.checkMayRead(model)
        let batch = try body.withUnsafeReadableBytes(OutcomeBatchReader.read) ?? JSONBody.decode(OutcomeBatch.self, from: body)
        let now = clock()
        let network = batch.exposures.isEmpty ? 0 : ClientNetwork.id(address, prefixes, key: identifiers)
        let (signer, today, installation) = (signer, ExposureToken.day(now), batch.installation)
        var record = try batch.record(now: now, identifiers: identifiers, network: network) { exposure throws(DepotError) in
            try signer.checkExposure(
                exposure.token, model: model, version: exposure.version, arm: exposure.arm, installation: installation, today: today)
        }
        // Only a batch with an event that counts takes one of its network's places in the hour.
        if record.totals.contains(where: { $0.network != 0 }),
            !budget.admits(model: model, network: network, installation: record.installation, hour: record.receivedHour)
        {
            record.uncount()
        }
        return record
    }

    /// Stores an accepted batch with the others waiting (``OutcomeWriter``). A batch refused
    /// because the model has no room for a new undeclared app metric is stored again without the
    /// events of the names the model does not have (each listed as refused), so that an app
    /// metric never takes the model-health events beside it down.
    /// - Returns: The receipt: how many events were applied, or that the batch was applied before.
    /// - Throws: ``DepotError``: `too_many_requests`, `not_found`, `invalid_events`.
    func ingest(_ record: OutcomeBatchRecord, of model: ModelName) async throws -> OutcomeReceipt {
        do {
            return record.receipt(applied: try await writer.record(record, of: model))
        } catch let error as DepotError where error.code == .invalidMetric {
            let known = Set(try await catalog.appMetrics(of: model).map(\.metric.name))
            let kept = record.withoutAppMetrics(except: known, because: error.message)
            return kept.receipt(applied: try await writer.record(kept, of: model))
        }
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
    /// control (its oldest version that reported), over counted outcomes only: those that carried
    /// the server's exposure token, within their network's hourly installations. Installations
    /// with none are listed apart as uncounted.
    func results(of model: ModelName) async throws -> ExperimentResults {
        let metrics = try await self.metrics(of: model)
        let everyExposure = try await catalog.exposures(of: model).filter { Set($0.value.map(\.version)).count > 1 }
        let rollout = try await catalog.rollout(of: model)
        var arms: [ExperimentResults.Arm] = []
        let rowsByMetric = everyExposure.isEmpty ? [:] : try await catalog.outcomes(of: model)
        for (arm, exposed) in everyExposure.sorted(by: { $0.key < $1.key }) {
            let seen = exposed.filter { $0.network != 0 }
            let installations = Dictionary(grouping: seen, by: \.version).mapValues(\.count)
            let uncounted = Dictionary(grouping: exposed.filter { $0.network == 0 }, by: \.version).mapValues(\.count)
            let control = installations.keys.min() ?? 0
            let rule: Rollout.Rule? = if case .rule(let id) = arm { rollout.rules.first { $0.id == id } } else { nil }
            let sampleRatio = rule.map { SampleRatioCheck(rule: $0.id, name: $0.name, shares: $0.split.shares, observed: installations) }
            let results = metrics.map { metric in
                ExperimentComparison(
                    metric: metric, control: control,
                    series: OutcomeSeries(
                        kind: metric.kind, rows: (rowsByMetric[metric.name]?[arm] ?? []).filter { $0.network != 0 }, exposures: seen,
                        cap: metric.cap)
                )
                .result
            }
            arms.append(
                ExperimentResults.Arm(
                    arm: arm.stored, name: rule?.name, control: control,
                    installations: Dictionary(uniqueKeysWithValues: installations.map { ("\($0.key)", $0.value) }),
                    uncounted: Dictionary(uniqueKeysWithValues: uncounted.map { ("\($0.key)", $0.value) }),
                    sampleRatio: sampleRatio, metrics: results))
        }
        return ExperimentResults(model: model, generated: clock(), metrics: metrics, arms: arms)
    }
}
