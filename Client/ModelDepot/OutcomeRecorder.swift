import Foundation
import ModelDepotShared

/// Records what happens with each model version on this device — model health (downloads,
/// verification refusals, installs, loads, inferences and their latency) and the app's own
/// metrics — for the version and rollout arm the signed manifest gave it, and queues them on disk
/// until ``ModelDownloader`` sends them (`POST /v1/models/{name}/events`).
///
/// Events are added up per metric, version, arm and hour before they are queued (what the server
/// keeps per installation anyway), so a model run at 30 frames a second adds a few queue entries an
/// hour, not thousands. The queue is written at most once a second while recording (and whenever
/// batches are taken or acknowledged), so it survives restarts but for the last second. It holds
/// at most ``maximumEntries``; past that the oldest entries are dropped and the server is told
/// how many events it lost. Nothing
/// leaves the device but the metric, version, arm, hour, count, values' total and error code, the
/// installation id the SDK already sends with manifests, and the server's exposure token of the
/// version and arm (`Depot-Exposure`), without which the server does not count the events.
///
/// ```swift
/// let model = try await downloader.model(named: "flowers")
/// try downloader.outcomes.record("accepted", value: 1, for: model)   // a user kept the suggestion
/// ```
public final class OutcomeRecorder: Sendable {
    /// The most entries queued (metric, version, arm, hour and code each make one).
    public static let maximumEntries = 5_000

    struct Entry: Codable, Hashable {
        var model: ModelName
        var metric: String
        var version: Int
        var arm: String
        var hour: Int
        var code: String?
    }

    struct Totals: Codable {
        var at: Int
        var count: Int
        var sum: Double
    }

    /// A batch taken from the queue and not yet acknowledged: sent again with the same id until
    /// the server answers, so it is never counted twice.
    struct Batch: Codable {
        var id: String
        var model: ModelName
        var events: [OutcomeBatch.Event]
        var dropped: Int
        /// The tokens of the events' versions and arms (`nil` in a batch saved by SDK 1.x).
        var exposures: [OutcomeBatch.Exposure]?
    }

    /// A version of a model handed out through an arm, whose events' batches carry its exposure token.
    struct Exposure: Codable, Hashable {
        var model: ModelName
        var version: Int
        var arm: String
    }

    struct State: Codable {
        var entries: [Entry: Totals] = [:]
        var batches: [Batch] = []
        var dropped: [ModelName: Int] = [:]
        /// The newest `Depot-Exposure` token of each version and arm the server handed out.
        var exposures: [Exposure: String] = [:]

        init() {}

        /// Reads a queue saved by this SDK or one from before exposure tokens.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            entries = try container.decode([Entry: Totals].self, forKey: .entries)
            batches = try container.decode([Batch].self, forKey: .batches)
            dropped = try container.decode([ModelName: Int].self, forKey: .dropped)
            exposures = try container.decodeIfPresent([Exposure: String].self, forKey: .exposures) ?? [:]
            // Counts no queue reaches (a damaged file, or one written by someone else) would
            // overflow when they are added up: such a file is not read.
            let limit = 0...Int(Int32.max)
            guard entries.values.allSatisfy({ limit.contains($0.count) }), dropped.values.allSatisfy(limit.contains),
                batches.allSatisfy({ limit.contains($0.dropped) && $0.events.allSatisfy { limit.contains($0.count ?? 1) } })
            else {
                throw DecodingError.dataCorruptedError(
                    forKey: .entries, in: container, debugDescription: "The outcome queue holds counts beyond \(Int32.max).")
            }
        }
    }

    private let file: URL
    private let clock: @Sendable () -> Date
    private let state: Locked<State>
    private let enabled: Locked<Bool>
    /// When the queue was last written: recording writes it at most once a second.
    private let savedAt = Locked<Date?>(nil)

    /// The most entries this recorder queues (``maximumEntries`` but in tests).
    private let capacity: Int

    init(directory: URL, enabled: Bool, clock: @escaping @Sendable () -> Date, capacity: Int = OutcomeRecorder.maximumEntries) {
        file = directory.appendingPathComponent("outcomes.json")
        self.capacity = capacity
        self.clock = clock
        self.enabled = Locked(enabled)
        if enabled, let data = try? Data(contentsOf: file), let saved = try? JSONDecoder().decode(State.self, from: data) {
            state = Locked(saved)
        } else {
            state = Locked(State())
            if !enabled { try? FileManager.default.removeItem(at: file) }
        }
    }

    /// Whether outcomes are recorded and sent; turning it off deletes the queue.
    public var isEnabled: Bool {
        get { enabled.withLock { $0 } }
        set {
            enabled.withLock { $0 = newValue }
            guard !newValue else { return }
            state.withLock { $0 = State() }
            try? FileManager.default.removeItem(at: file)
        }
    }

    /// Records an app metric for the version in use.
    /// - Parameters:
    ///   - metric: Its name (1–64 characters of a-z, 0-9, '_', '.', '-', starting with a letter);
    ///     declare it on the server (`depot experiment metric add`) to choose how it is read.
    ///   - value: The value (1 for a count or a conversion).
    ///   - model: The model in use.
    /// - Throws: `DepotError` (`invalid_metric`) for a bad name, a model-health name, or a value
    ///   that is not finite.
    public func record(_ metric: String, value: Double = 1, for model: VerifiedModel) throws(DepotError) {
        try ExperimentMetric.checkName(metric)
        guard ExperimentMetric.Health(rawValue: metric) == nil else {
            throw DepotError(.invalidMetric, "'\(metric)' is a model-health metric the SDK records by itself; choose another name.")
        }
        guard value.isFinite, abs(value) <= OutcomeBatch.maximumValue else {
            throw DepotError(
                .invalidMetric, "Value \(value) of metric '\(metric)' is not a finite number within ±\(OutcomeBatch.maximumValue).")
        }
        add(metric, value: value, code: nil, manifest: model.manifest)
    }

    /// Records a model-health outcome (the SDK and `ModelDepotLiteRT` call this).
    public func record(_ health: ExperimentMetric.Health, value: Double? = nil, code: DepotError.Code? = nil, for model: VerifiedModel) {
        record(health, value: value, code: code, manifest: model.manifest)
    }

    func record(_ health: ExperimentMetric.Health, value: Double? = nil, code: DepotError.Code? = nil, manifest: ModelManifest) {
        add(health.rawValue, value: value ?? 1, code: code?.rawValue, manifest: manifest)
    }

    private func add(_ metric: String, value: Double, code: String?, manifest: ModelManifest) {
        guard isEnabled else { return }
        let now = Int(clock().timeIntervalSince1970)
        let entry = Entry(
            model: manifest.model, metric: metric, version: manifest.version, arm: manifest.arm, hour: now / 3_600, code: code)
        state.withLock { state in
            var totals = state.entries[entry] ?? Totals(at: now, count: 0, sum: 0)
            totals.count += 1
            totals.sum += value
            state.entries[entry] = totals
            while state.entries.count > capacity, let oldest = state.entries.min(by: { $0.value.at < $1.value.at }) {
                state.entries[oldest.key] = nil
                state.dropped[oldest.key.model, default: 0] += oldest.value.count
            }
        }
        let due = savedAt.withLock { saved in saved.map { clock().timeIntervalSince($0) >= 1 } ?? true }
        if due { save() }
    }

    /// Keeps the exposure token of a manifest answer: the server counts the events of
    /// `manifest`'s version and arm only with it. A model keeps at most 8 tokens: past that,
    /// those of versions with no queued event are forgotten.
    func expose(_ token: String, manifest: ModelManifest) {
        guard isEnabled, token.utf8.count <= 64 else { return }
        state.withLock { state in
            let exposure = Exposure(model: manifest.model, version: manifest.version, arm: manifest.arm)
            state.exposures[exposure] = token
            guard state.exposures.keys.count(where: { $0.model == manifest.model }) > 8 else { return }
            let queued = Set(state.entries.keys.map { Exposure(model: $0.model, version: $0.version, arm: $0.arm) })
            state.exposures = state.exposures.filter { $0.key.model != manifest.model || $0.key == exposure || queued.contains($0.key) }
        }
    }

    /// The exposure token held for `manifest`'s version and arm, if any.
    func exposure(for manifest: ModelManifest) -> String? {
        guard isEnabled else { return nil }
        return state.withLock { $0.exposures[Exposure(model: manifest.model, version: manifest.version, arm: manifest.arm)] }
    }

    /// The batches to send: those sent before without an answer; when there are none, the queue's
    /// entries as new batches of at most `OutcomeBatch/maximumEvents` (one entry is one event with
    /// its count). So an offline device holds at most one generation of batches besides the queue.
    func takeBatches() -> [Batch] {
        let batches = state.withLock { state -> [Batch] in
            guard state.batches.isEmpty else { return state.batches }
            for (model, entries) in Dictionary(grouping: state.entries, by: \.key.model) {
                let events = entries.sorted { $0.value.at < $1.value.at }.map { entry, totals in
                    OutcomeBatch.Event(
                        metric: entry.metric, version: entry.version, arm: entry.arm, at: totals.at, value: totals.sum, code: entry.code,
                        count: totals.count)
                }
                for start in stride(from: 0, to: events.count, by: OutcomeBatch.maximumEvents) {
                    let part = Array(events[start..<min(start + OutcomeBatch.maximumEvents, events.count)])
                    let exposed = Set(part.map { Exposure(model: model, version: $0.version, arm: $0.arm) })
                    let exposures = exposed.compactMap { exposure in
                        state.exposures[exposure].map { OutcomeBatch.Exposure(version: exposure.version, arm: exposure.arm, token: $0) }
                    }
                    state.batches.append(
                        Batch(
                            id: OutcomeBatch.makeID(), model: model, events: part, dropped: start == 0 ? state.dropped[model] ?? 0 : 0,
                            exposures: exposures.sorted { ($0.version, $0.arm) < ($1.version, $1.arm) }))
                }
                state.dropped[model] = nil
            }
            state.entries = [:]
            return state.batches
        }
        save()
        return batches
    }

    /// Forgets a batch the server answered (applied, applied before, or refused for good).
    func finished(_ id: String) {
        state.withLock { $0.batches.removeAll { $0.id == id } }
        save()
    }

    /// Events waiting, in the queue and in batches not yet acknowledged.
    public var pendingEvents: Int {
        state.withLock { state in
            state.entries.values.reduce(0) { $0 + $1.count } + state.batches.reduce(0) { $0 + $1.events.reduce(0) { $0 + ($1.count ?? 1) } }
        }
    }

    /// Writes the queue now, atomically (a crash leaves the previous file or the new one): call
    /// it when the app goes to the background, so the last second's outcomes are kept too.
    public func save() {
        guard isEnabled, let data = try? state.withLock({ try JSONEncoder().encode($0) }) else { return }
        try? StoredFile.write(data, to: file)
        savedAt.withLock { $0 = clock() }
    }
}
