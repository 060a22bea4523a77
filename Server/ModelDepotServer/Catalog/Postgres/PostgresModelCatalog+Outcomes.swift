import Foundation
import ModelDepotRollouts
import ModelDepotShared
import PostgresNIO

extension PostgresModelCatalog {
    /// The most batches one transaction applies: more at once go in several, so that none comes
    /// near the ``deadline`` on a loaded machine. A transaction takes about ten round trips
    /// whatever its size: each step is one statement for all its batches.
    static let outcomeTransactionSize = 128

    public var outcomesPerTransaction: Int { Self.outcomeTransactionSize }

    public func recordOutcomes(_ batches: [(model: ModelName, batch: OutcomeBatchRecord)]) async throws -> [Result<Bool, DepotError>] {
        var results: [Result<Bool, DepotError>] = []
        var firstFailure: (any Error)?, committed = false
        for part in Self.outcomeTransactions(batches) {
            do {
                results += try await recordOutcomesTogether(part)
                committed = true
            } catch {
                firstFailure = firstFailure ?? error
                let failure =
                    error as? DepotError
                    ?? DepotError(.unavailable, "The catalog database failed to apply the batch: \(error). Send it again shortly.")
                results += Array(repeating: .failure(failure), count: part.count)
            }
        }
        // No transaction was committed: the group failed as one transaction would.
        if let firstFailure, !committed { throw firstFailure }
        return results
    }

    /// A group cut into transactions of at most ``outcomeTransactionSize`` batches, and where a
    /// batch id comes again (a batch sent twice at once): the second is then a duplicate of the
    /// first, or applied on its own if the first was refused, as when they come one by one.
    static func outcomeTransactions(_ batches: [(model: ModelName, batch: OutcomeBatchRecord)]) -> [[(
        model: ModelName, batch: OutcomeBatchRecord
    )]] {
        var parts: [[(model: ModelName, batch: OutcomeBatchRecord)]] = []
        var part: [(model: ModelName, batch: OutcomeBatchRecord)] = []
        var ids: Set<[String]> = []
        for entry in batches {
            let id = [entry.model.rawValue, entry.batch.id]
            if part.count == outcomeTransactionSize || ids.contains(id) {
                parts.append(part)
                part = []
                ids = []
            }
            part.append(entry)
            ids.insert(id)
        }
        if !part.isEmpty { parts.append(part) }
        return parts
    }

    /// Applies batches in one transaction, each whole or not at all, as if one by one in order.
    private func recordOutcomesTogether(_ batches: [(model: ModelName, batch: OutcomeBatchRecord)]) async throws -> [Result<
        Bool, DepotError
    >] {
        try await transaction { [logger] connection in
            // The commit does not wait for the WAL flush (for this transaction alone): a crash of
            // the database server can lose the last moments of batches, never leave half of one.
            try await connection.query("SET LOCAL synchronous_commit = off", logger: logger)
            var results = [Result<Bool, DepotError>](repeating: .success(false), count: batches.count)
            let byModel = Dictionary(grouping: batches.indices, by: { batches[$0].model.rawValue })
            for (_, indices) in byModel.sorted(by: { $0.key < $1.key }) {
                var applying = PostgresOutcomeTransaction(model: batches[indices[0]].model, batches: indices.map { batches[$0].batch })
                try await applying.apply(connection, logger: logger)
                for (index, result) in zip(indices, applying.results) { results[index] = result }
            }
            return results
        }
    }

    public func outcomes(of name: ModelName) async throws -> [String: [CountedArm: [OutcomeRow]]] {
        try await run { [logger] connection in
            let id = try await Self.modelID(name, connection, logger: logger)
            let rows = try await connection.query(
                """
                SELECT metric, arm, version::bigint, hour, installation, network, count, sum FROM outcome WHERE model_id = \(id)
                """, logger: logger)
            var outcomes: [String: [CountedArm: [OutcomeRow]]] = [:]
            for try await (metric, arm, version, hour, installation, network, count, sum) in rows.decode(
                (String, String, Int, Int, Int64, Int64, Int, Double).self)
            {
                outcomes[metric, default: [:]][CountedArm(stored: arm), default: []].append(
                    OutcomeRow(version: version, hour: hour, installation: installation, network: network, count: count, sum: sum))
            }
            return outcomes
        }
    }

    public func countedOutcomes(of name: ModelName, arm: CountedArm, versions: Set<Int>, fromHour hour: Int) async throws -> [String:
        [OutcomeRow]]
    {
        try await run { [logger] connection in
            let id = try await Self.modelID(name, connection, logger: logger)
            let rows = try await connection.query(
                """
                SELECT metric, version::bigint, hour, installation, network, count, sum FROM outcome
                WHERE model_id = \(id) AND arm = \(arm.stored) AND hour >= \(hour) AND network != 0 AND version = ANY(\(versions.sorted())::integer[])
                """, logger: logger)
            var outcomes: [String: [OutcomeRow]] = [:]
            for try await (metric, version, hour, installation, network, count, sum) in rows.decode(
                (String, Int, Int, Int64, Int64, Int, Double).self)
            {
                outcomes[metric, default: []].append(
                    OutcomeRow(version: version, hour: hour, installation: installation, network: network, count: count, sum: sum))
            }
            return outcomes
        }
    }

    public func exposures(of name: ModelName) async throws -> [CountedArm: [OutcomeExposure]] {
        try await run { [logger] connection in
            let id = try await Self.modelID(name, connection, logger: logger)
            let rows = try await connection.query(
                """
                SELECT arm, version::bigint, installation, hour, network FROM outcome_exposure WHERE model_id = \(id)
                """, logger: logger)
            var exposures: [CountedArm: [OutcomeExposure]] = [:]
            for try await (arm, version, installation, hour, network) in rows.decode((String, Int, Int64, Int, Int64).self) {
                exposures[CountedArm(stored: arm), default: []].append(
                    OutcomeExposure(version: version, hour: hour, installation: installation, network: network))
            }
            return exposures
        }
    }

    public func appMetrics(of name: ModelName) async throws -> [AppMetric] {
        try await run { [logger] connection in
            let id = try await Self.modelID(name, connection, logger: logger)
            let rows = try await connection.query(
                """
                SELECT name, kind, direction, tolerance, guardrail, cap, declared FROM experiment_metric WHERE model_id = \(id) ORDER BY name
                """, logger: logger)
            var metrics: [AppMetric] = []
            for try await (name, kind, direction, tolerance, guardrail, cap, declared) in rows.decode(
                (String, String, String, Double, Bool, String?, Bool).self)
            {
                metrics.append(
                    try AppMetric.stored(
                        name: name, kind: kind, direction: direction, tolerance: tolerance,
                        guardrail: guardrail, cap: cap, declared: declared))
            }
            return metrics
        }
    }

    public func pruneOutcomes(batchesBefore: Int, rowsBefore: Int) async throws {
        try await transaction { [logger] connection in
            try await connection.query("DELETE FROM outcome_batch WHERE hour < \(batchesBefore)", logger: logger)
            try await connection.query("DELETE FROM outcome_quota WHERE hour < \(batchesBefore)", logger: logger)
            try await connection.query("DELETE FROM outcome WHERE hour < \(rowsBefore)", logger: logger)
            // An exposure older than the window takes the first hour of the rows kept, or goes with them.
            try await connection.query(
                """
                DELETE FROM outcome_exposure e WHERE e.hour < \(rowsBefore) AND NOT EXISTS (
                    SELECT 1 FROM outcome o
                    WHERE o.model_id = e.model_id AND o.installation = e.installation AND o.arm = e.arm AND o.version = e.version)
                """, logger: logger)
            try await connection.query(
                """
                UPDATE outcome_exposure e SET hour = (
                    SELECT MIN(o.hour) FROM outcome o
                    WHERE o.model_id = e.model_id AND o.installation = e.installation AND o.arm = e.arm AND o.version = e.version)
                WHERE e.hour < \(rowsBefore)
                """, logger: logger)
        }
    }
}
