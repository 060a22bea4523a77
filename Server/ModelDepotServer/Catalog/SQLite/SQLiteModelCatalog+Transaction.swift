import Foundation
import GRDB
import ModelDepotRollouts
import ModelDepotShared

extension SQLiteModelCatalog {
    public func write<T: Sendable>(model name: ModelName, _ body: @escaping @Sendable (inout ModelTransaction) throws -> T) async throws
        -> (value: T, unreferenced: Set<String>)
    {
        try await write { db in
            let model = try modelRecord(name, db)
            let versions = try VersionRecord.filter(VersionRecord.Columns.modelId == model.id).fetchAll(db)
            let files = try VersionFileRecord.filter(versions.compactMap(\.id).contains(VersionFileRecord.Columns.versionId))
                .order(VersionFileRecord.Columns.position).fetchAll(db)
            let filesByVersion = Dictionary(grouping: files, by: \.versionId)
            var transaction = ModelTransaction(
                name: name, lastVersionNumber: model.lastVersionNumber,
                versions: try versions.map { try $0.version(of: name, files: (filesByVersion[$0.id!] ?? []).map { try $0.file() }) },
                rollout: try RolloutRecord.fetchOne(db, key: model.id)?.document ?? Rollout(),
                guards: try RolloutGuardRecord.fetchOne(db, key: model.id)?.document ?? [],
                declaredMetrics: try String.fetchSet(
                    db, sql: "SELECT name FROM experiment_metric WHERE model_id = ? AND declared", arguments: [model.id]),
                undeclaredMetrics: try String.fetchSet(
                    db, sql: "SELECT name FROM experiment_metric WHERE model_id = ? AND NOT declared", arguments: [model.id]))
            let value = try body(&transaction)
            var released: Set<String> = []
            for write in transaction.writes { released.formUnion(try apply(write, to: model, db)) }
            if let changed = transaction.manifestsChanged { try Self.advanceManifestVersion(name.rawValue, at: changed.at, db) }
            return (value, try unreferenced(released, db))
        }
    }

    /// Applies one write to the model's rows; returns the digests it released (of deleted rows).
    private func apply(_ write: ModelTransaction.Write, to model: ModelRecord, _ db: Database) throws -> Set<String> {
        let modelID = model.id!
        func id(of number: Int) throws -> Int64 {
            let found = try Int64.fetchOne(
                db, sql: "SELECT id FROM version WHERE model_id = ? AND number = ?", arguments: [modelID, number])
            guard let found else { throw CatalogRule.noVersion(number, of: model.name) }
            return found
        }
        switch write {
        case .addVersion(let version):
            try db.execute(sql: "UPDATE model SET last_version_number = ? WHERE id = ?", arguments: [version.version, modelID])
            var record = VersionRecord(
                id: nil, modelId: modelID, number: version.version, sha256: version.sha256, size: version.size, notes: version.notes,
                published: version.published, createdAt: version.createdAt, publishedAt: version.publishedAt, tflite: version.tflite,
                uploadedBy: version.uploadedBy)
            try record.insert(db)
            for (position, file) in version.files.enumerated() {
                try VersionFileRecord(versionId: record.id!, name: file.name, sha256: file.sha256, size: file.size, position: position)
                    .insert(db)
            }
            return []
        case .setPublished(let version):
            try db.execute(
                sql: "UPDATE version SET published = ?, published_at = ? WHERE id = ?",
                arguments: [version.published, version.publishedAt, try id(of: version.version)])
            return []
        case .deleteVersion(let number):
            let versionID = try id(of: number)
            let digests = try String.fetchAll(
                db, sql: "SELECT sha256 FROM version WHERE id = ? UNION SELECT sha256 FROM version_file WHERE version_id = ?",
                arguments: [versionID, versionID])
            let patches = try patchDigests(of: [versionID], db)
            try db.execute(sql: "DELETE FROM version WHERE id = ?", arguments: [versionID])
            return Set(digests + patches)
        case .deleteModel:
            let digests = try String.fetchAll(
                db,
                sql: """
                    SELECT sha256 FROM version WHERE model_id = ?
                    UNION SELECT version_file.sha256 FROM version_file JOIN version ON version.id = version_file.version_id WHERE model_id = ?
                    """, arguments: [modelID, modelID])
            let patches = try patchDigests(
                of: try Int64.fetchAll(db, sql: "SELECT id FROM version WHERE model_id = ?", arguments: [modelID]), db)
            try db.execute(sql: "DELETE FROM model WHERE id = ?", arguments: [modelID])
            return Set(digests + patches)
        case .saveRollout(let change):
            try RolloutRecord(modelId: modelID, document: change.after, updatedAt: change.at).save(db)
            var entry = RolloutChangeRecord(
                id: nil, modelId: modelID, keyId: change.keyID, at: change.at, before: change.before, after: change.after,
                reason: change.reason)
            try entry.insert(db)
            return []
        case .saveGuards(let guards, let hasWork):
            try RolloutGuardRecord(modelId: modelID, document: guards, hasWork: hasWork).save(db)
            return []
        case .declareMetric(let metric):
            try db.execute(
                sql: """
                    INSERT INTO experiment_metric (model_id, name, kind, direction, tolerance, guardrail, cap, declared)
                    VALUES (?, ?, ?, ?, ?, ?, ?, 1)
                    ON CONFLICT (model_id, name) DO UPDATE SET kind = excluded.kind, direction = excluded.direction,
                        tolerance = excluded.tolerance, guardrail = excluded.guardrail, cap = excluded.cap, declared = 1
                    """,
                arguments: [
                    modelID, metric.name, metric.kind.rawValue, metric.direction.rawValue, metric.tolerance, metric.guardrail,
                    metric.cap?.description,
                ])
            return []
        case .removeMetric(let metric):
            try db.execute(sql: "DELETE FROM experiment_metric WHERE model_id = ? AND name = ?", arguments: [modelID, metric])
            return []
        }
    }
}
