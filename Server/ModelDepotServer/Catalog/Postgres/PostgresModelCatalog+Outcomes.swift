import Foundation
import ModelDepotShared
import PostgresNIO

extension PostgresModelCatalog {
    /// The most batches one transaction applies: a group of the writer's (up to 1,024) goes in
    /// several, so that none comes near the ``deadline``. A batch takes about six round trips:
    /// 1,127 in one transaction took 9.4 s alone, and on a machine loaded by the whole test run
    /// transactions of 64 failed while one of 20 in the same call did not.
    static let outcomeTransactionSize = 16

    public func recordOutcomes(_ batches: [(model: ModelName, batch: OutcomeBatchRecord)]) async throws -> [Result<Bool, DepotError>] {
        var results: [Result<Bool, DepotError>] = []
        var firstFailure: (any Error)?, committed = false
        for start in stride(from: 0, to: batches.count, by: Self.outcomeTransactionSize) {
            let part = Array(batches[start..<min(start + Self.outcomeTransactionSize, batches.count)])
            do {
                results += try await recordOutcomesTogether(part)
                committed = true
            } catch {
                firstFailure = firstFailure ?? error
                let failure = error as? DepotError ?? DepotError(.unavailable, "The catalog database failed to apply the batch: \(error). Send it again shortly.")
                results += Array(repeating: .failure(failure), count: part.count)
            }
        }
        // No transaction was committed: the group failed as one transaction would.
        if let firstFailure, !committed { throw firstFailure }
        return results
    }

    /// Applies batches in one transaction, each whole or not at all (a savepoint each).
    private func recordOutcomesTogether(_ batches: [(model: ModelName, batch: OutcomeBatchRecord)]) async throws -> [Result<Bool, DepotError>] {
        try await transaction { [logger] connection in
            // The commit does not wait for the WAL flush (for this transaction alone): a crash of
            // the database server can lose the last moments of batches, never leave half of one.
            try await connection.query("SET LOCAL synchronous_commit = off", logger: logger)
            var models: [ModelName: OutcomeModel] = [:]
            var results: [Result<Bool, DepotError>] = []
            for (name, batch) in batches {
                try await connection.query("SAVEPOINT outcome_batch", logger: logger)
                do {
                    results.append(.success(try await Self.record(batch, of: name, models: &models, connection, logger: logger)))
                    try await connection.query("RELEASE SAVEPOINT outcome_batch", logger: logger)
                } catch let error as DepotError {
                    try await connection.query("ROLLBACK TO SAVEPOINT outcome_batch", logger: logger)
                    results.append(.failure(error))
                }
            }
            return results
        }
    }

    /// A model's id, versions and app metrics, read once per transaction (the versions again when
    /// a batch names one they lack, the metrics when it names a new one: added since, perhaps).
    private struct OutcomeModel {
        let id: Int64
        var versions: Set<Int>
        var metrics: Set<String>?
    }

    /// Applies one batch (see ``recordOutcomes(_:)``); throws its refusal.
    private static func record(_ batch: OutcomeBatchRecord, of name: ModelName, models: inout [ModelName: OutcomeModel],
                               _ connection: PostgresConnection, logger: Logger) async throws -> Bool {
        func versions(of id: Int64) async throws -> Set<Int> {
            Set(try await connection.column("SELECT number::bigint FROM version WHERE model_id = \(id)", as: Int.self, logger: logger))
        }
        func metrics(of id: Int64) async throws -> Set<String> {
            Set(try await connection.column("SELECT name FROM experiment_metric WHERE model_id = \(id)", as: String.self, logger: logger))
        }
        var model: OutcomeModel
        if let known = models[name] {
            model = known
        } else {
            let id = try await Self.modelID(name, connection, logger: logger)
            model = OutcomeModel(id: id, versions: try await versions(of: id))
        }
        defer { models[name] = model }
        let id = model.id
        let inserted = try await connection.column("""
            INSERT INTO outcome_batch (model_id, id, hour) VALUES (\(id), \(batch.id), \(batch.receivedHour))
            ON CONFLICT DO NOTHING RETURNING 1
            """, as: Int32.self, logger: logger)
        guard !inserted.isEmpty else { return false }
        if !batch.versions.isSubset(of: model.versions) {
            model.versions = try await versions(of: id)
        }
        try CatalogRule.checkOutcomeVersions(batch, of: name, existing: model.versions)
        let sent = try await connection.column("""
            INSERT INTO outcome_quota (model_id, installation, hour, events) VALUES (\(id), \(batch.installation), \(batch.receivedHour), \(batch.events))
            ON CONFLICT (model_id, installation, hour) DO UPDATE SET events = outcome_quota.events + excluded.events
            RETURNING events
            """, as: Int.self, logger: logger)
        try CatalogRule.checkHourlyEvents(sent.first ?? 0, of: name)
        if !batch.appMetrics.isSubset(of: model.metrics ?? []) {
            model.metrics = try await metrics(of: id)
            let new = batch.appMetrics.subtracting(model.metrics ?? [])
            if !new.isEmpty {
                // Two batches adding names at once must not pass the limit together.
                try await connection.query("SELECT id FROM model WHERE id = \(id) FOR UPDATE", logger: logger)
                let undeclared = try await connection.column("""
                    SELECT COUNT(*)::bigint FROM experiment_metric WHERE model_id = \(id) AND NOT declared
                    """, as: Int.self, logger: logger)
                let stillNew = new.subtracting(try await metrics(of: id))
                try CatalogRule.checkUndeclared(stillNew, of: name, alreadyUndeclared: undeclared.first ?? 0)
                let names = stillNew.sorted()
                try await connection.query("""
                    INSERT INTO experiment_metric (model_id, name, kind, direction, tolerance, guardrail, declared)
                    SELECT \(id), n, 'sum', 'increase', 0, false, false FROM unnest(\(names)::text[]) AS n
                    """, logger: logger)
                model.metrics?.formUnion(stillNew)
            }
        }
        let totals = batch.totals.sorted { ($0.metric, $0.arm.stored, $0.version, $0.hour) < ($1.metric, $1.arm.stored, $1.version, $1.hour) }
        try await connection.query("""
            INSERT INTO outcome (model_id, metric, arm, version, hour, installation, count, sum)
            SELECT \(id), u.metric, u.arm, u.version, u.hour, \(batch.installation), u.count, u.sum
            FROM unnest(\(totals.map(\.metric))::text[], \(totals.map(\.arm.stored))::text[], \(totals.map(\.version))::bigint[],
                        \(totals.map(\.hour))::bigint[], \(totals.map(\.count))::bigint[], \(totals.map(\.sum))::double precision[])
                 AS u(metric, arm, version, hour, count, sum)
            ON CONFLICT (model_id, installation, metric, arm, version, hour)
            DO UPDATE SET count = outcome.count + excluded.count, sum = outcome.sum + excluded.sum
            """, logger: logger)
        let exposures = batch.exposures.sorted { ($0.arm.stored, $0.version) < ($1.arm.stored, $1.version) }
        try await connection.query("""
            INSERT INTO outcome_exposure (model_id, arm, version, installation, hour)
            SELECT \(id), u.arm, u.version, \(batch.installation), u.hour
            FROM unnest(\(exposures.map(\.arm.stored))::text[], \(exposures.map(\.version))::bigint[], \(exposures.map(\.hour))::bigint[])
                 AS u(arm, version, hour)
            ON CONFLICT (model_id, arm, version, installation) DO UPDATE SET hour = LEAST(outcome_exposure.hour, excluded.hour)
            """, logger: logger)
        return true
    }

    public func outcomes(of name: ModelName) async throws -> [String: [CountedArm: [OutcomeRow]]] {
        try await run { [logger] connection in
            let id = try await Self.modelID(name, connection, logger: logger)
            let rows = try await connection.query("""
                SELECT metric, arm, version::bigint, hour, installation, count, sum FROM outcome WHERE model_id = \(id)
                """, logger: logger)
            var outcomes: [String: [CountedArm: [OutcomeRow]]] = [:]
            for try await (metric, arm, version, hour, installation, count, sum) in rows.decode((String, String, Int, Int, Int64, Int, Double).self) {
                outcomes[metric, default: [:]][CountedArm(stored: arm), default: []].append(
                    OutcomeRow(version: version, hour: hour, installation: installation, count: count, sum: sum))
            }
            return outcomes
        }
    }

    public func exposures(of name: ModelName) async throws -> [CountedArm: [OutcomeExposure]] {
        try await run { [logger] connection in
            let id = try await Self.modelID(name, connection, logger: logger)
            let rows = try await connection.query("""
                SELECT arm, version::bigint, installation, hour FROM outcome_exposure WHERE model_id = \(id)
                """, logger: logger)
            var exposures: [CountedArm: [OutcomeExposure]] = [:]
            for try await (arm, version, installation, hour) in rows.decode((String, Int, Int64, Int).self) {
                exposures[CountedArm(stored: arm), default: []].append(OutcomeExposure(version: version, hour: hour, installation: installation))
            }
            return exposures
        }
    }

    public func appMetrics(of name: ModelName) async throws -> [AppMetric] {
        try await run { [logger] connection in
            let id = try await Self.modelID(name, connection, logger: logger)
            let rows = try await connection.query("""
                SELECT name, kind, direction, tolerance, guardrail, declared FROM experiment_metric WHERE model_id = \(id) ORDER BY name
                """, logger: logger)
            var metrics: [AppMetric] = []
            for try await (name, kind, direction, tolerance, guardrail, declared) in rows.decode((String, String, String, Double, Bool, Bool).self) {
                metrics.append(try AppMetric.stored(name: name, kind: kind, direction: direction, tolerance: tolerance,
                                                    guardrail: guardrail, declared: declared))
            }
            return metrics
        }
    }

    public func declareMetric(_ metric: ExperimentMetric, of name: ModelName) async throws {
        try await transaction { [logger] connection in
            let id = try await Self.modelID(name, connection, logger: logger)
            try await connection.query("SELECT id FROM model WHERE id = \(id) FOR UPDATE", logger: logger)
            let declared = try await connection.column("SELECT name FROM experiment_metric WHERE model_id = \(id) AND declared",
                                                       as: String.self, logger: logger)
            if !declared.contains(metric.name) { try CatalogRule.checkDeclared(declared.count, adding: metric.name, of: name) }
            try await connection.query("""
                INSERT INTO experiment_metric (model_id, name, kind, direction, tolerance, guardrail, declared)
                VALUES (\(id), \(metric.name), \(metric.kind.rawValue), \(metric.direction.rawValue), \(metric.tolerance), \(metric.guardrail), true)
                ON CONFLICT (model_id, name) DO UPDATE SET kind = excluded.kind, direction = excluded.direction,
                    tolerance = excluded.tolerance, guardrail = excluded.guardrail, declared = true
                """, logger: logger)
        }
    }

    public func removeMetric(named metric: String, of name: ModelName) async throws {
        try await transaction { [logger] connection in
            let id = try await Self.modelID(name, connection, logger: logger)
            let removed = try await connection.column("""
                DELETE FROM experiment_metric WHERE model_id = \(id) AND name = \(metric) AND declared RETURNING 1
                """, as: Int32.self, logger: logger)
            guard !removed.isEmpty else { throw CatalogRule.noMetric(metric, of: name) }
        }
    }

    public func pruneOutcomeBatches(beforeHour hour: Int) async throws {
        try await transaction { [logger] connection in
            try await connection.query("DELETE FROM outcome_batch WHERE hour < \(hour)", logger: logger)
            try await connection.query("DELETE FROM outcome_quota WHERE hour < \(hour)", logger: logger)
        }
    }
}
