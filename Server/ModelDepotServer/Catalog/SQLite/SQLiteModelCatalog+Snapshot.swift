import Foundation
import GRDB
import ModelDepotRollouts
import ModelDepotShared

extension SQLiteModelCatalog {
    /// The whole catalog, read in one transaction.
    func snapshot() async throws -> CatalogSnapshot {
        try await read { db in
            var snapshot = CatalogSnapshot()
            let records = try ModelRecord.fetchAll(db)
            let names = Dictionary(uniqueKeysWithValues: records.compactMap { record in record.id.map { ($0, record.name) } })
            func name(_ id: Int64) throws -> String {
                guard let name = names[id] else {
                    throw DepotError(
                        .internalError, "A row names model id \(id), which the catalog does not hold. Restore depot.sqlite from a backup.")
                }
                return name
            }
            snapshot.models = records.map {
                .init(
                    name: $0.name, description: $0.description, tags: $0.tags, createdAt: $0.createdAt,
                    lastVersionNumber: $0.lastVersionNumber)
            }
            let files = Dictionary(grouping: try VersionFileRecord.order(VersionFileRecord.Columns.position).fetchAll(db), by: \.versionId)
            snapshot.versions = try VersionRecord.order(VersionRecord.Columns.modelId, VersionRecord.Columns.number).fetchAll(db).map {
                .init(
                    model: try name($0.modelId), number: $0.number, sha256: $0.sha256, size: $0.size, notes: $0.notes,
                    published: $0.published,
                    createdAt: $0.createdAt, publishedAt: $0.publishedAt, tflite: $0.tflite,
                    files: try (files[$0.id!] ?? []).map { try $0.file() }, uploadedBy: $0.uploadedBy)
            }
            snapshot.patches = try Self.patches(where: "1", arguments: [], db)
            snapshot.keys = try AccessKeyRecord.fetchAll(db).map { .init(key: try $0.key(), secretHash: Array($0.secretHash)) }
            snapshot.rollouts = try RolloutRecord.fetchAll(db).map {
                .init(model: try name($0.modelId), document: $0.document, updatedAt: $0.updatedAt)
            }
            snapshot.guards = try RolloutGuardRecord.fetchAll(db).map {
                .init(model: try name($0.modelId), guards: $0.document, hasWork: $0.hasWork)
            }
            snapshot.changes = try RolloutChangeRecord.order(RolloutChangeRecord.Columns.id).fetchAll(db).map {
                .init(model: try name($0.modelId), keyID: $0.keyId, at: $0.at, before: $0.before, after: $0.after, reason: $0.reason)
            }
            snapshot.usage = try Row.fetchAll(db, sql: "SELECT model_id, version, arm, kind, minute, count FROM usage").map {
                .init(
                    model: try name($0["model_id"]), version: $0["version"], arm: CountedArm(stored: $0["arm"]),
                    kind: try UsageKind(stored: $0["kind"]),
                    minute: $0["minute"], count: $0["count"])
            }
            snapshot.installations = try Row.fetchAll(db, sql: "SELECT model_id, arm, version, installation, minute FROM arm_installation")
                .map {
                    .init(
                        model: try name($0["model_id"]), arm: CountedArm(stored: $0["arm"]), version: $0["version"],
                        installation: $0["installation"], minute: $0["minute"])
                }
            snapshot.sequences = try Row.fetchAll(db, sql: "SELECT name, last FROM manifest_sequence").map { ($0["name"], $0["last"]) }
            snapshot.roots = try Row.fetchAll(db, sql: "SELECT version, envelope, created_at FROM root_document ORDER BY version").map {
                .init(version: $0["version"], envelope: $0["envelope"], createdAt: $0["created_at"])
            }
            snapshot.outcomes = try Row.fetchAll(
                db,
                sql: """
                    SELECT model_id, metric, arm, version, hour, installation, MAX(network) AS network, SUM(count) AS count,
                        SUM(sum) AS sum
                    FROM outcome GROUP BY model_id, metric, arm, version, hour, installation
                    """
            ).map {
                .init(
                    model: try name($0["model_id"]), metric: $0["metric"], arm: $0["arm"],
                    row: OutcomeRow(
                        version: $0["version"], hour: $0["hour"], installation: $0["installation"], network: $0["network"],
                        count: $0["count"], sum: $0["sum"]))
            }
            snapshot.exposures = try Row.fetchAll(
                db,
                sql: """
                    SELECT model_id, arm, version, installation, MIN(hour) AS hour, MAX(network) AS network FROM outcome
                    GROUP BY model_id, arm, version, installation
                    """
            ).map {
                .init(
                    model: try name($0["model_id"]), arm: $0["arm"],
                    exposure: OutcomeExposure(
                        version: $0["version"], hour: $0["hour"], installation: $0["installation"], network: $0["network"]))
            }
            snapshot.batches = try Row.fetchAll(db, sql: "SELECT model_id, id, hour FROM outcome_batch").map {
                .init(model: try name($0["model_id"]), id: $0["id"], hour: $0["hour"])
            }
            snapshot.metrics = try Row.fetchAll(
                db, sql: "SELECT model_id, name, kind, direction, tolerance, guardrail, cap, declared FROM experiment_metric"
            ).map {
                .init(
                    model: try name($0["model_id"]),
                    metric: try AppMetric.stored(
                        name: $0["name"], kind: $0["kind"], direction: $0["direction"], tolerance: $0["tolerance"],
                        guardrail: $0["guardrail"], cap: $0["cap"], declared: $0["declared"]))
            }
            return snapshot
        }
    }
}
