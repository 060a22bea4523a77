import Foundation
import ModelDepotRollouts
import ModelDepotShared

/// Outcome batches from devices, the app's metrics and what the results read. One role of
/// ``ModelCatalog``; every method throws ``DepotError``. Declaring and removing metrics are written
/// once, below, over ``ModelTransactions``.
public protocol OutcomeCatalog: ModelTransactions {
    /// Applies checked outcome batches together, each whole or not at all, with the answers
    /// applying them one by one in order would give, so that many devices' batches share one
    /// commit; PostgreSQL in transactions of at most
    /// ``PostgresModelCatalog/outcomeTransactionSize``, so that none nears its deadline. The
    /// commit does not wait for the disk (SQLite `synchronous=NORMAL`, PostgreSQL
    /// `synchronous_commit=off`, for this transaction alone): a power failure can lose the last
    /// moments of acknowledged batches.
    /// - Returns: Per batch, in order: `false` when a batch with its id was applied before
    ///   (nothing changes), `true` when applied, or why it was refused: `not_found` (no such
    ///   model), `invalid_metric` (one undeclared metric too many), `invalid_events` (a version
    ///   the model does not have), `too_many_requests` (past the installation's hourly events), or the failure of
    ///   its transaction when another of PostgreSQL's was committed.
    /// - Throws: ``DepotError`` when the transaction itself fails (then no batch was applied).
    func recordOutcomes(_ batches: [(model: ModelName, batch: OutcomeBatchRecord)]) async throws -> [Result<Bool, DepotError>]
    /// The most outcome batches ``recordOutcomes(_:)`` commits in one transaction: the writer
    /// hands it no more at once, so that each batch is answered as soon as its own transaction
    /// has committed, not after the others of a larger group.
    var outcomesPerTransaction: Int { get }
    /// The model's outcome rows, per metric and arm, read in one pass (the rows are kept by
    /// installation, so a query per metric would read them all each time).
    func outcomes(of model: ModelName) async throws -> [String: [CountedArm: [OutcomeRow]]]
    /// The counted rows (``OutcomeRow/network`` not 0) of `versions` through `arm` from `hour`
    /// on, by metric: what one guard reviews, read by the database's filter rather than from all
    /// of the model's rows.
    func countedOutcomes(of model: ModelName, arm: CountedArm, versions: Set<Int>, fromHour hour: Int) async throws -> [String:
        [OutcomeRow]]
    /// The installations that reported each version, per arm, with the first hour each did.
    func exposures(of model: ModelName) async throws -> [CountedArm: [OutcomeExposure]]
    /// The app's metrics (declared ones, and names recorded without declaring, read as sums).
    func appMetrics(of model: ModelName) async throws -> [AppMetric]
    /// Forgets the batch ids and hourly event counts from before `batchesBefore` (a device does
    /// not send a batch again after ``OutcomeBatch/maximumAge``), and the outcome rows from before
    /// `rowsBefore` (the retention window, `depot serve --outcome-retention-days`).
    func pruneOutcomes(batchesBefore: Int, rowsBefore: Int) async throws
}

extension OutcomeCatalog {
    /// Declares a metric, or changes a declared one; at most ``ExperimentMetric/maximumDeclared``.
    public func declareMetric(_ metric: ExperimentMetric, of name: ModelName) async throws {
        _ = try await write(model: name) { model in
            if !model.declaredMetrics.contains(metric.name) {
                try CatalogRule.checkDeclared(model.declaredMetrics.count, adding: metric.name, of: name)
            }
            model.declare(metric)
        }
    }

    /// Forgets a metric's name, declared or recorded without a declaration (its data stays, and
    /// an undeclared name's slot is free again); `not_found` when the model has no such name.
    public func removeMetric(named metric: String, of name: ModelName) async throws {
        _ = try await write(model: name) { model in
            guard model.declaredMetrics.contains(metric) || model.undeclaredMetrics.contains(metric) else {
                throw CatalogRule.noMetric(metric, of: name)
            }
            model.removeMetric(named: metric)
        }
    }
}
