import ModelDepotShared
import PostgresNIO

/// One model's batches of a PostgreSQL transaction, applied with one statement per step for
/// all of them: their ids, the hourly counts and the model's metrics (locked), admitted in order
/// (``OutcomeAdmission``), then the counts, the app metrics they add, their outcome rows and
/// exposures. A refused batch keeps nothing.
struct PostgresOutcomeTransaction {
    let model: ModelName
    let batches: [OutcomeBatchRecord]
    /// Whether each batch's id was new.
    private var fresh: [Bool] = []
    private var refusals: [Int: DepotError] = [:]

    init(model: ModelName, batches: [OutcomeBatchRecord]) {
        self.model = model
        self.batches = batches
    }

    var results: [Result<Bool, DepotError>] {
        batches.indices.map { index in refusals[index].map { .failure($0) } ?? .success(fresh[index]) }
    }

    private func accepted(_ index: Int) -> Bool { fresh[index] && refusals[index] == nil }

    mutating func apply(_ connection: PostgresConnection, logger: Logger) async throws {
        let read = try await connection.query(
            """
            SELECT m.id, ARRAY(SELECT number::bigint FROM version WHERE model_id = m.id),
                   ARRAY(SELECT name FROM experiment_metric WHERE model_id = m.id),
                   (SELECT COUNT(*)::bigint FROM experiment_metric WHERE model_id = m.id AND NOT declared)
            FROM model m WHERE m.name = \(model.rawValue)
            """, logger: logger)
        var found: (id: Int64, versions: [Int], metrics: [String], undeclared: Int)?
        for try await row in read.decode((Int64, [Int], [String], Int).self) { found = row }
        guard let (id, versions, known, counted) = found else {
            fresh = batches.map { _ in false }
            for index in batches.indices { refusals[index] = CatalogRule.noModel(model) }
            return
        }
        // In id order, as every transaction inserts them: replicas sent the same batches wait instead of deadlocking.
        let byID = batches.sorted { $0.id < $1.id }
        let inserted = Set(
            try await connection.column(
                """
                INSERT INTO outcome_batch (model_id, id, hour)
                SELECT \(id), u.id, u.hour FROM unnest(\(byID.map(\.id))::text[], \(byID.map(\.receivedHour))::bigint[]) AS u(id, hour)
                ON CONFLICT DO NOTHING RETURNING id
                """, as: String.self, logger: logger))
        fresh = batches.map { inserted.contains($0.id) }
        var (metrics, undeclared) = (known, counted)
        if batches.indices.contains(where: { fresh[$0] && !batches[$0].appMetrics.isSubset(of: metrics) }) {
            // Lock the model's row and read its metrics again, so that two transactions adding
            // names at once do not pass the limit together.
            try await connection.query("SELECT id FROM model WHERE id = \(id) FOR UPDATE", logger: logger)
            let rows = try await connection.query("SELECT name, declared FROM experiment_metric WHERE model_id = \(id)", logger: logger)
            (metrics, undeclared) = ([], 0)
            for try await (name, declared) in rows.decode((String, Bool).self) {
                metrics.append(name)
                if !declared { undeclared += 1 }
            }
        }
        var admission = OutcomeAdmission(model: model, versions: Set(versions), metrics: Set(metrics), undeclared: undeclared)
        let sent = try await lockHours(id, connection, logger: logger)
        var added: [String] = []
        for index in batches.indices where fresh[index] {
            let batch = batches[index]
            do {
                let before = sent[OutcomeAdmission.Hour(installation: batch.installation, hour: batch.receivedHour)] ?? 0
                added += try admission.admit(batch, sentBefore: before).sorted()
            } catch {
                refusals[index] = error
            }
        }
        let refused = batches.indices.filter { fresh[$0] && refusals[$0] != nil }.map { batches[$0].id }
        if !refused.isEmpty {
            try await connection.query("DELETE FROM outcome_batch WHERE model_id = \(id) AND id = ANY(\(refused)::text[])", logger: logger)
        }
        let changed = admission.admitted.keys.sorted()
        if !changed.isEmpty {
            let events = changed.map { (sent[$0] ?? 0) + (admission.admitted[$0] ?? 0) }
            try await connection.query(
                """
                UPDATE outcome_quota AS q SET events = u.events
                FROM unnest(\(changed.map(\.installation))::bigint[], \(changed.map(\.hour))::bigint[], \(events)::bigint[])
                     AS u(installation, hour, events)
                WHERE q.model_id = \(id) AND q.installation = u.installation AND q.hour = u.hour
                """, logger: logger)
        }
        if !added.isEmpty {
            try await connection.query(
                """
                INSERT INTO experiment_metric (model_id, name, kind, direction, tolerance, guardrail, declared)
                SELECT \(id), n, 'sum', 'increase', 0, false, false FROM unnest(\(added)::text[]) AS n
                """, logger: logger)
        }
        try await writeRows(id, connection, logger: logger)
    }

    /// Locks the hourly counts of the new batches' installations (rows made at 0 where none is
    /// yet, in one order, so that replicas wait for each other instead of deadlocking) and
    /// returns them.
    private func lockHours(_ id: Int64, _ connection: PostgresConnection, logger: Logger) async throws -> [OutcomeAdmission.Hour: Int] {
        let keys = Set(
            batches.indices.filter { fresh[$0] }.map {
                OutcomeAdmission.Hour(installation: batches[$0].installation, hour: batches[$0].receivedHour)
            }
        ).sorted()
        guard !keys.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            INSERT INTO outcome_quota (model_id, installation, hour, events)
            SELECT \(id), u.installation, u.hour, 0 FROM unnest(\(keys.map(\.installation))::bigint[], \(keys.map(\.hour))::bigint[]) AS u(installation, hour)
            ON CONFLICT (model_id, installation, hour) DO UPDATE SET events = outcome_quota.events
            RETURNING installation, hour, events
            """, logger: logger)
        var sent: [OutcomeAdmission.Hour: Int] = [:]
        for try await (installation, hour, events) in rows.decode((Int64, Int, Int).self) {
            sent[OutcomeAdmission.Hour(installation: installation, hour: hour)] = events
        }
        return sent
    }

    private struct RowKey: Hashable, Comparable {
        let installation: Int64
        let metric: String
        let arm: String
        let version: Int
        let hour: Int
        static func < (a: Self, b: Self) -> Bool {
            (a.installation, a.metric, a.arm, a.version, a.hour) < (b.installation, b.metric, b.arm, b.version, b.hour)
        }
    }

    private struct ExposureKey: Hashable, Comparable {
        let arm: String
        let version: Int
        let installation: Int64
        static func < (a: Self, b: Self) -> Bool { (a.arm, a.version, a.installation) < (b.arm, b.version, b.installation) }
    }

    /// The accepted batches' outcome rows and exposures, added up per key first (one statement
    /// may not change a row twice), in key order.
    private func writeRows(_ id: Int64, _ connection: PostgresConnection, logger: Logger) async throws {
        var totals: [RowKey: (count: Int, sum: Double, network: Int64)] = [:]
        var exposures: [ExposureKey: (hour: Int, network: Int64)] = [:]
        for index in batches.indices where accepted(index) {
            let batch = batches[index]
            for total in batch.totals {
                let key = RowKey(
                    installation: batch.installation, metric: total.metric, arm: total.arm.stored, version: total.version, hour: total.hour)
                let known = totals[key] ?? (0, 0, 0)
                totals[key] = (known.count + total.count, known.sum + total.sum, max(known.network, total.network))
            }
            for exposure in batch.exposures {
                let key = ExposureKey(arm: exposure.arm.stored, version: exposure.version, installation: batch.installation)
                let known = exposures[key] ?? (exposure.hour, exposure.network)
                exposures[key] = (min(known.hour, exposure.hour), max(known.network, exposure.network))
            }
        }
        let rows = totals.sorted { $0.key < $1.key }
        if !rows.isEmpty {
            try await connection.query(
                """
                INSERT INTO outcome (model_id, metric, arm, version, hour, installation, network, count, sum)
                SELECT \(id), u.metric, u.arm, u.version, u.hour, u.installation, u.network, u.count, u.sum
                FROM unnest(\(rows.map(\.key.metric))::text[], \(rows.map(\.key.arm))::text[], \(rows.map(\.key.version))::bigint[],
                            \(rows.map(\.key.hour))::bigint[], \(rows.map(\.key.installation))::bigint[], \(rows.map(\.value.network))::bigint[],
                            \(rows.map(\.value.count))::bigint[], \(rows.map(\.value.sum))::double precision[])
                     AS u(metric, arm, version, hour, installation, network, count, sum)
                ON CONFLICT (model_id, installation, metric, arm, version, hour)
                DO UPDATE SET count = outcome.count + excluded.count, sum = outcome.sum + excluded.sum,
                    network = GREATEST(outcome.network, excluded.network)
                """, logger: logger)
        }
        let first = exposures.sorted { $0.key < $1.key }
        if !first.isEmpty {
            try await connection.query(
                """
                INSERT INTO outcome_exposure (model_id, arm, version, installation, hour, network)
                SELECT \(id), u.arm, u.version, u.installation, u.hour, u.network
                FROM unnest(\(first.map(\.key.arm))::text[], \(first.map(\.key.version))::bigint[], \(first.map(\.key.installation))::bigint[],
                            \(first.map(\.value.hour))::bigint[], \(first.map(\.value.network))::bigint[])
                     AS u(arm, version, installation, hour, network)
                ON CONFLICT (model_id, arm, version, installation)
                DO UPDATE SET hour = LEAST(outcome_exposure.hour, excluded.hour), network = GREATEST(outcome_exposure.network, excluded.network)
                """, logger: logger)
        }
    }
}
