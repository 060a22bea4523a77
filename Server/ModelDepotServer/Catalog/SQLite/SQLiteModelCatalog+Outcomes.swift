import Foundation
import GRDB
import ModelDepotRollouts
import ModelDepotShared

extension SQLiteModelCatalog {
    /// One transaction for a whole group of the writer's: 1,024 batches take SQLite about 25 ms
    /// (about 23 µs a batch, the writer measured alone), and each commit costs more than a batch.
    public var outcomesPerTransaction: Int { 1_024 }

    public func recordOutcomes(_ batches: [(model: ModelName, batch: OutcomeBatchRecord)]) async throws -> [Result<Bool, DepotError>] {
        try await writeWithoutWaitingForTheDisk { db in
            try hourlyEvents.prepare(hours: Set(batches.map(\.batch.receivedHour)), db)
            var counted = SQLiteHourlyEvents.Pending()
            // What the batches are checked against, read once per model and group.
            var models: [ModelName: OutcomeModel] = [:]
            let results: [Result<Bool, DepotError>] = try batches.map { name, batch in
                do {
                    var model = try models[name] ?? OutcomeModel(name, db)
                    defer { models[name] = model }
                    return .success(try record(batch, of: &model, counted: &counted, db))
                } catch let error as DepotError {
                    return .failure(error)
                }
            }
            hourlyEvents.count(counted, db)
            return results
        }
    }

    /// A model as outcome batches are admitted to it, kept up to date by the batches of a group.
    private struct OutcomeModel {
        let id: Int64
        var admission: OutcomeAdmission

        init(_ name: ModelName, _ db: Database) throws {
            guard let id = try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM model WHERE name = ?"), arguments: [name.rawValue])
            else {
                throw CatalogRule.noModel(name)
            }
            self.id = id
            admission = OutcomeAdmission(
                model: name,
                versions: try Int.fetchSet(db.cachedStatement(sql: "SELECT number FROM version WHERE model_id = ?"), arguments: [id]),
                metrics: try String.fetchSet(
                    db.cachedStatement(sql: "SELECT name FROM experiment_metric WHERE model_id = ?"), arguments: [id]),
                undeclared: try Int.fetchOne(
                    db.cachedStatement(sql: "SELECT COUNT(*) FROM experiment_metric WHERE model_id = ? AND NOT declared"), arguments: [id])
                    ?? 0)
        }
    }

    /// Applies one batch (see ``recordOutcomes(_:)``); throws its refusal. The batch is admitted
    /// before anything of it is written but its id, which a refusal deletes again.
    private func record(
        _ batch: OutcomeBatchRecord, of model: inout OutcomeModel, counted: inout SQLiteHourlyEvents.Pending,
        _ db: Database
    ) throws -> Bool {
        let insert = try db.cachedStatement(
            sql: "INSERT OR IGNORE INTO outcome_batch (model_id, id, hour, installation, events) VALUES (?, ?, ?, ?, ?)")
        try insert.bind(model.id, at: 1)
        try insert.bind(batch.id, at: 2)
        try insert.bind(batch.receivedHour, at: 3)
        try insert.bind(batch.installation, at: 4)
        try insert.bind(batch.events, at: 5)
        try insert.run(db)
        guard db.changesCount == 1 else { return false }
        let key = SQLiteHourlyEvents.Key(model: model.id, installation: batch.installation)
        let new: Set<String>
        do {
            new = try model.admission.admit(batch, sentBefore: hourlyEvents.committedEvents(key, hour: batch.receivedHour))
        } catch {
            try db.cachedStatement(sql: "DELETE FROM outcome_batch WHERE model_id = ? AND id = ?").execute(arguments: [model.id, batch.id])
            throw error
        }
        counted.add(batch.events, to: key, hour: batch.receivedHour)
        for metric in new {
            try db.cachedStatement(
                sql: """
                    INSERT INTO experiment_metric (model_id, name, kind, direction, tolerance, guardrail, declared)
                    VALUES (?, ?, 'sum', 'increase', 0, 0, 0)
                    """
            ).execute(arguments: [model.id, metric])
        }
        // Appended (read back added up per installation, metric, arm, version and hour, with the
        // largest network of the rows, as PostgreSQL keeps them), up to 8 rows a statement: the SDK's hour of model health is about that many.
        // A batch's rows mostly have one arm: its text is made once while it stays the same.
        var arm = (value: CountedArm.default, text: CountedArm.default.stored)
        for start in stride(from: 0, to: batch.totals.count, by: 8) {
            let rows = batch.totals[start..<min(start + 8, batch.totals.count)]
            let insert = try db.cachedStatement(sql: Self.outcomeInsert[rows.count - 1])
            for (offset, row) in rows.enumerated() {
                let first = Int32(offset * 9 + 1)
                try insert.bind(model.id, at: first)
                try insert.bind(row.metric, at: first + 1)
                if row.arm != arm.value { arm = (row.arm, row.arm.stored) }
                try insert.bind(arm.text, at: first + 2)
                try insert.bind(row.version, at: first + 3)
                try insert.bind(row.hour, at: first + 4)
                try insert.bind(batch.installation, at: first + 5)
                try insert.bind(row.count, at: first + 6)
                try insert.bind(row.sum, at: first + 7)
                try insert.bind(row.network, at: first + 8)
            }
            try insert.run(db)
        }
        return true
    }

    /// The insert of 1 to 8 outcome rows.
    private static let outcomeInsert = (1...8).map { count in
        """
        INSERT INTO outcome (model_id, metric, arm, version, hour, installation, count, sum, network)
        VALUES \(Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?, ?)", count: count).joined(separator: ", "))
        """
    }

    public func outcomes(of name: ModelName) async throws -> [String: [CountedArm: [OutcomeRow]]] {
        try await read { db in
            let model = try modelRecord(name, db)
            var rows: [String: [CountedArm: [OutcomeRow]]] = [:]
            let cursor = try Row.fetchCursor(
                db,
                sql: """
                    SELECT metric, arm, version, hour, installation, MAX(network) AS network, SUM(count) AS count, SUM(sum) AS sum
                    FROM outcome WHERE model_id = ? GROUP BY metric, arm, version, hour, installation
                    """, arguments: [model.id])
            while let row = try cursor.next() {
                rows[row["metric"], default: [:]][CountedArm(stored: row["arm"]), default: []].append(
                    OutcomeRow(
                        version: row["version"], hour: row["hour"], installation: row["installation"], network: row["network"],
                        count: row["count"], sum: row["sum"])
                )
            }
            return rows
        }
    }

    public func countedOutcomes(of name: ModelName, arm: CountedArm, versions: Set<Int>, fromHour hour: Int) async throws -> [String:
        [OutcomeRow]]
    {
        try await read { db in
            let model = try modelRecord(name, db)
            var rows: [String: [OutcomeRow]] = [:]
            let cursor = try Row.fetchCursor(
                db,
                sql: """
                    SELECT metric, version, hour, installation, MAX(network) AS network, SUM(count) AS count, SUM(sum) AS sum
                    FROM outcome
                    WHERE model_id = ? AND arm = ? AND hour >= ? AND version IN (\(versions.map { _ in "?" }.joined(separator: ", ")))
                    GROUP BY metric, version, hour, installation HAVING MAX(network) != 0
                    """, arguments: StatementArguments([model.id, arm.stored, hour] as [any DatabaseValueConvertible] + versions.sorted()))
            while let row = try cursor.next() {
                rows[row["metric"], default: []].append(
                    OutcomeRow(
                        version: row["version"], hour: row["hour"], installation: row["installation"], network: row["network"],
                        count: row["count"], sum: row["sum"]))
            }
            return rows
        }
    }

    public func exposures(of name: ModelName) async throws -> [CountedArm: [OutcomeExposure]] {
        try await read { db in
            let model = try modelRecord(name, db)
            var exposures: [CountedArm: [OutcomeExposure]] = [:]
            // The first hour of each installation with each version through each arm.
            let cursor = try Row.fetchCursor(
                db,
                sql: """
                    SELECT arm, version, installation, MIN(hour) AS hour, MAX(network) AS network FROM outcome WHERE model_id = ?
                    GROUP BY arm, version, installation
                    """, arguments: [model.id])
            while let row = try cursor.next() {
                exposures[CountedArm(stored: row["arm"]), default: []].append(
                    OutcomeExposure(version: row["version"], hour: row["hour"], installation: row["installation"], network: row["network"]))
            }
            return exposures
        }
    }

    public func appMetrics(of name: ModelName) async throws -> [AppMetric] {
        try await read { db in
            let model = try modelRecord(name, db)
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT name, kind, direction, tolerance, guardrail, cap, declared FROM experiment_metric WHERE model_id = ? ORDER BY name
                    """, arguments: [model.id]
            ).map { row in
                try AppMetric.stored(
                    name: row["name"], kind: row["kind"], direction: row["direction"], tolerance: row["tolerance"],
                    guardrail: row["guardrail"], cap: row["cap"], declared: row["declared"])
            }
        }
    }

    public func pruneOutcomes(batchesBefore: Int, rowsBefore: Int) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM outcome_batch WHERE hour < ?", arguments: [batchesBefore])
            // Exposures are read from the rows (their first hour), so they follow.
            try db.execute(sql: "DELETE FROM outcome WHERE hour < ?", arguments: [rowsBefore])
        }
    }
}
