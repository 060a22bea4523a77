import GRDB
import ModelDepotShared

/// The catalog's schema, one migration per change; the schema holds the invariants.
enum SQLiteCatalogMigrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: models, versions, keys") { db in
            try db.create(table: "model") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("name", .text).notNull().unique()
                    .check(sql: "length(name) BETWEEN 1 AND 64 AND name NOT GLOB '*[^a-z0-9._-]*' AND substr(name, 1, 1) GLOB '[a-z0-9]'")
                t.column("description", .text).notNull().defaults(to: "")
                t.column("tags", .jsonText).notNull().defaults(to: "[]")
                t.column("createdAt", .datetime).notNull()
                t.column("lastVersionNumber", .integer).notNull().defaults(to: 0).check { $0 >= 0 }
            }
            try db.create(table: "version") { t in
                t.autoIncrementedPrimaryKey("id")
                t.belongsTo("model", onDelete: .cascade).notNull()
                t.column("number", .integer).notNull().check { $0 >= 1 }
                t.column("sha256", .text).notNull().check(sql: "length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'")
                t.column("size", .integer).notNull().check { $0 >= 0 }
                t.column("notes", .text).notNull().defaults(to: "")
                t.column("published", .boolean).notNull().defaults(to: false)
                t.column("createdAt", .datetime).notNull()
                t.column("publishedAt", .datetime)
                t.column("tflite", .jsonText).notNull()
                t.uniqueKey(["modelId", "number"])
            }
            try db.create(index: "version_on_sha256", on: "version", columns: ["sha256"])
            try db.create(table: "accessKey") { t in
                t.primaryKey("id", .text)
                t.column("kind", .text).notNull().check(sql: "kind IN ('admin', 'app')")
                t.column("name", .text).notNull().defaults(to: "")
                t.column("models", .jsonText)
                t.column("secretHash", .blob).notNull().check(sql: "length(secretHash) = 32")
                t.column("createdAt", .datetime).notNull()
                t.column("revokedAt", .datetime)
            }
        }
        migrator.registerMigration("v2: rollouts and their audit log") { db in
            try db.create(table: "rollout") { t in
                t.primaryKey("modelId", .integer).references("model", onDelete: .cascade)
                t.column("document", .jsonText).notNull()
                t.column("updatedAt", .datetime).notNull()
            }
            try db.create(table: "rolloutChange") { t in
                t.autoIncrementedPrimaryKey("id")
                t.belongsTo("model", onDelete: .cascade).notNull()
                t.column("keyID", .text).notNull()
                t.column("at", .datetime).notNull()
                t.column("before", .jsonText).notNull()
                t.column("after", .jsonText).notNull()
            }
        }
        migrator.registerMigration("v3: usage counts") { db in
            try db.create(table: "usage") { t in
                t.belongsTo("model", onDelete: .cascade).notNull()
                t.column("version", .integer).notNull()
                t.column("arm", .text).notNull()
                t.column("kind", .text).notNull().check(sql: "kind IN ('manifest', 'download')")
                t.column("minute", .integer).notNull()
                t.column("count", .integer).notNull().check { $0 > 0 }
                t.primaryKey(["modelId", "version", "arm", "kind", "minute"])
            }
        }
        migrator.registerMigration("v4: signed manifests") { db in
            try db.alter(table: "model") { t in
                t.add(column: "manifestVersion", .integer).notNull().defaults(to: 0).check { $0 >= 0 }
            }
            try db.create(table: "rootDocument") { t in
                t.primaryKey("version", .integer).check { $0 >= 1 }
                t.column("envelope", .blob).notNull()
                t.column("createdAt", .datetime).notNull()
            }
        }
        migrator.registerMigration("v5: manifest versions per name, kept across deletion") { db in
            try db.create(table: "manifestSequence") { t in
                t.primaryKey("name", .text)
                t.column("last", .integer).notNull().check { $0 >= 1 }
            }
            try db.execute(
                sql: "INSERT INTO manifestSequence (name, last) SELECT name, manifestVersion FROM model WHERE manifestVersion > 0")
            try db.alter(table: "model") { t in t.drop(column: "manifestVersion") }
        }
        migrator.registerMigration("v6: installations per arm") { db in
            // One row per installation (a 64-bit hash of its id) and arm and version of a model,
            // with the minute it was first seen there: the sample-ratio check counts
            // installations, not their repeated checks.
            try db.create(table: "armInstallation", options: .withoutRowID) { t in
                t.belongsTo("model", onDelete: .cascade).notNull()
                t.column("arm", .text).notNull()
                t.column("version", .integer).notNull()
                t.column("installation", .integer).notNull()
                t.column("minute", .integer).notNull()
                t.primaryKey(["modelId", "arm", "version", "installation"])
            }
        }
        migrator.registerMigration("v7: companion files") { db in
            // The files uploaded with a version's model, stored by digest like the model.
            try db.create(table: "versionFile", options: .withoutRowID) { t in
                t.belongsTo("version", onDelete: .cascade).notNull()
                t.column("name", .text).notNull().check(sql: "length(name) BETWEEN 1 AND 64")
                t.column("sha256", .text).notNull().check(sql: "length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'")
                t.column("size", .integer).notNull().check { $0 >= 0 }
                t.column("position", .integer).notNull().check { $0 >= 0 }
                t.primaryKey(["versionId", "name"])
            }
            try db.create(index: "versionFile_on_sha256", on: "versionFile", columns: ["sha256"])
        }
        migrator.registerMigration("v8: who uploaded a version") { db in
            try db.alter(table: "version") { t in t.add(column: "uploadedBy", .text) }
        }
        migrator.registerMigration("v9: console sessions") { db in
            // A console sign-in: the SHA-256 of the cookie's random id, never the id itself.
            try db.create(table: "consoleSession", options: .withoutRowID) { t in
                t.primaryKey("id", .text).check(sql: "length(id) = 64 AND id NOT GLOB '*[^0-9a-f]*'")
                t.column("keyId", .text).notNull().references("accessKey", onDelete: .cascade)
                t.column("startedAt", .datetime).notNull()
                t.column("usedAt", .datetime).notNull()
            }
            try db.create(index: "consoleSession_on_keyId", on: "consoleSession", columns: ["keyId"])
        }
        migrator.registerMigration("v10: experiment outcomes") { db in
            // One installation's (a 64-bit hash of its id) events of one metric for one version
            // through one arm in one hour: the results make each installation's value from its rows.
            // Keyed by installation first: a batch (one installation's) writes a page or two, not
            // a page per metric (with the metric first, a 50-entry batch rewrote ~50 pages).
            try db.create(table: "outcome", options: .withoutRowID) { t in
                t.belongsTo("model", onDelete: .cascade).notNull()
                t.column("metric", .text).notNull()
                t.column("arm", .text).notNull()
                t.column("version", .integer).notNull()
                t.column("hour", .integer).notNull()
                t.column("installation", .integer).notNull()
                t.column("count", .integer).notNull().check { $0 >= 0 }
                t.column("sum", .double).notNull()
                t.primaryKey(["modelId", "installation", "metric", "arm", "version", "hour"])
            }
            // The first hour an installation reported a version through an arm.
            try db.create(table: "outcomeExposure", options: .withoutRowID) { t in
                t.belongsTo("model", onDelete: .cascade).notNull()
                t.column("arm", .text).notNull()
                t.column("version", .integer).notNull()
                t.column("installation", .integer).notNull()
                t.column("hour", .integer).notNull()
                t.primaryKey(["modelId", "arm", "version", "installation"])
            }
            // Batch ids applied (a batch sent again changes nothing) and events per installation
            // and hour (the hourly limit), both pruned after a week.
            try db.create(table: "outcomeBatch", options: .withoutRowID) { t in
                t.belongsTo("model", onDelete: .cascade).notNull()
                t.column("id", .text).notNull()
                t.column("hour", .integer).notNull()
                t.primaryKey(["modelId", "id"])
            }
            try db.create(index: "outcomeBatch_on_hour", on: "outcomeBatch", columns: ["hour"])
            try db.create(table: "outcomeQuota", options: .withoutRowID) { t in
                t.belongsTo("model", onDelete: .cascade).notNull()
                t.column("installation", .integer).notNull()
                t.column("hour", .integer).notNull()
                t.column("events", .integer).notNull()
                t.primaryKey(["modelId", "installation", "hour"])
            }
            try db.create(index: "outcomeQuota_on_hour", on: "outcomeQuota", columns: ["hour"])
            // The app's metrics: declared, or recorded without a declaration (read as sums).
            try db.create(table: "experimentMetric", options: .withoutRowID) { t in
                t.belongsTo("model", onDelete: .cascade).notNull()
                t.column("name", .text).notNull()
                t.column("kind", .text).notNull().check(sql: "kind IN ('proportion', 'sum', 'mean')")
                t.column("direction", .text).notNull().check(sql: "direction IN ('increase', 'decrease')")
                t.column("tolerance", .double).notNull()
                t.column("guardrail", .boolean).notNull()
                t.column("declared", .boolean).notNull()
                t.primaryKey(["modelId", "name"])
            }
        }
        migrator.registerMigration("v11: guarded rollouts") { db in
            // One document per model: its guards with their timelines and webhook secrets.
            try db.create(table: "rolloutGuard") { t in
                t.primaryKey("modelId", .integer).references("model", onDelete: .cascade)
                t.column("document", .text).notNull()
                t.column("running", .boolean).notNull()
            }
            try db.alter(table: "rolloutChange") { t in t.add(column: "reason", .text) }
        }
        migrator.registerMigration("v12: patches") { db in
            // A patch made from one version's file to another's (file '' is the model, else a
            // companion file's name); sha256 NULL: made, but too large to offer. Gone with either version.
            try db.create(table: "versionPatch", options: .withoutRowID) { t in
                t.column("versionId", .integer).notNull().references("version", onDelete: .cascade)
                t.column("fromVersionId", .integer).notNull().references("version", onDelete: .cascade)
                t.column("file", .text).notNull().check(sql: "length(file) <= 64")
                t.column("fromSha256", .text).notNull().check(sql: "length(fromSha256) = 64 AND fromSha256 NOT GLOB '*[^0-9a-f]*'")
                t.column("sha256", .text).check(sql: "sha256 IS NULL OR (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*')")
                t.column("size", .integer).notNull().check { $0 >= 0 }
                t.primaryKey(["versionId", "fromVersionId", "file"])
            }
            try db.create(index: "versionPatch_on_fromVersionId", on: "versionPatch", columns: ["fromVersionId"])
            try db.create(index: "versionPatch_on_sha256", on: "versionPatch", columns: ["sha256"])
        }
        migrator.registerMigration("v13: fewer pages per outcome batch") { db in
            // Outcome rows are appended in the order batches arrive (a batch writes the end of the
            // table and of its index, not a random page of a large key) and added up when read: an
            // installation normally sends one batch per hour, so rows rarely share a key.
            try db.create(table: "outcomeAppended") { t in
                t.belongsTo("model", onDelete: .cascade).notNull()
                t.column("metric", .text).notNull()
                t.column("arm", .text).notNull()
                t.column("version", .integer).notNull()
                t.column("hour", .integer).notNull()
                t.column("installation", .integer).notNull()
                t.column("count", .integer).notNull().check { $0 >= 0 }
                t.column("sum", .double).notNull()
            }
            try db.execute(
                sql: """
                    INSERT INTO outcomeAppended (modelId, metric, arm, version, hour, installation, count, sum)
                    SELECT modelId, metric, arm, version, hour, installation, count, sum FROM outcome
                    """)
            try db.drop(table: "outcome")
            try db.rename(table: "outcomeAppended", to: "outcome")
            // An installation's first hour with a version through an arm is the least hour of its
            // outcome rows: read from them, not written again with every batch.
            try db.drop(table: "outcomeExposure")
            // Keyed by hour first, the hourly limit's rows are pruned by their key: no index to
            // write with every batch.
            try db.create(table: "outcomeQuotaByHour", options: .withoutRowID) { t in
                t.belongsTo("model", onDelete: .cascade, indexed: false).notNull()
                t.column("hour", .integer).notNull()
                t.column("installation", .integer).notNull()
                t.column("events", .integer).notNull()
                t.primaryKey(["modelId", "hour", "installation"])
            }
            try db.execute(
                sql:
                    "INSERT INTO outcomeQuotaByHour (modelId, hour, installation, events) SELECT modelId, hour, installation, events FROM outcomeQuota"
            )
            try db.drop(table: "outcomeQuota")
            try db.rename(table: "outcomeQuotaByHour", to: "outcomeQuota")
        }
        migrator.registerMigration("v14: hourly counts in the batch rows") { db in
            // A batch's row holds its installation and number of events: the hourly limit adds
            // them up once per hour and process (SQLiteHourlyEvents), and no page of counts is
            // written with every batch. The covering index is in hour and batch id order, so
            // that a time-ordered id (a version 7 UUID) writes its end.
            try db.alter(table: "outcomeBatch") { t in
                t.add(column: "installation", .integer).notNull().defaults(to: 0)
                t.add(column: "events", .integer).notNull().defaults(to: 0)
            }
            // The counts kept so far become rows of their own, under an id no device sends (not a UUID).
            try db.execute(
                sql: """
                    INSERT INTO outcomeBatch (modelId, id, hour, installation, events)
                    SELECT modelId, 'counted before v14: ' || hour || ' ' || installation, hour, installation, events FROM outcomeQuota
                    """)
            try db.drop(table: "outcomeQuota")
            try db.drop(index: "outcomeBatch_on_hour")
            try db.create(index: "outcomeBatch_by_hour", on: "outcomeBatch", columns: ["hour", "id", "modelId", "installation", "events"])
        }
        migrator.registerMigration("v15: one index keyed by batch id") { db in
            // Batch ids from many devices arrive out of order (a device makes an id with its batch
            // and sends it when it may), so every index keyed by id writes a page of its own per
            // batch: three did (the table, its model index, the by-hour index), now one does (the
            // uniqueness index). Rows are appended in the order batches arrive, found by hour
            // through an index in hour and arrival order, which a batch writes at its end.
            try db.create(table: "outcomeBatchAppended") { t in
                t.belongsTo("model", onDelete: .cascade, indexed: false).notNull()
                t.column("id", .text).notNull()
                t.column("hour", .integer).notNull()
                t.column("installation", .integer).notNull()
                t.column("events", .integer).notNull()
            }
            try db.execute(
                sql: """
                    INSERT INTO outcomeBatchAppended (modelId, id, hour, installation, events)
                    SELECT modelId, id, hour, installation, events FROM outcomeBatch ORDER BY hour
                    """)
            try db.drop(table: "outcomeBatch")
            try db.rename(table: "outcomeBatchAppended", to: "outcomeBatch")
            try db.create(index: "outcomeBatch_id", on: "outcomeBatch", columns: ["modelId", "id"], unique: true)
            try db.create(index: "outcomeBatch_by_hour", on: "outcomeBatch", columns: ["hour"])
        }
        migrator.registerMigration("v16: the PostgreSQL catalog's names") { db in
            // Tables, columns and indexes take the snake_case names of the PostgreSQL catalog, so
            // that both catalogs' queries read alike. SQLite rewrites the checks, indexes and
            // foreign keys that name a renamed table or column; the renames change no row.
            let tables = [
                "accessKey": "access_key", "rolloutChange": "rollout_change", "armInstallation": "arm_installation",
                "manifestSequence": "manifest_sequence", "rootDocument": "root_document", "versionFile": "version_file",
                "consoleSession": "console_session", "outcomeBatch": "outcome_batch", "experimentMetric": "experiment_metric",
                "rolloutGuard": "rollout_guard", "versionPatch": "version_patch",
            ]
            for (old, new) in tables.sorted(by: { $0.key < $1.key }) { try db.rename(table: old, to: new) }
            let columns: [(table: String, renames: KeyValuePairs<String, String>)] = [
                ("model", ["createdAt": "created_at", "lastVersionNumber": "last_version_number"]),
                (
                    "version",
                    ["modelId": "model_id", "createdAt": "created_at", "publishedAt": "published_at", "uploadedBy": "uploaded_by"]
                ),
                ("access_key", ["secretHash": "secret_hash", "createdAt": "created_at", "revokedAt": "revoked_at"]),
                ("rollout", ["modelId": "model_id", "updatedAt": "updated_at"]),
                ("rollout_change", ["modelId": "model_id", "keyID": "key_id"]),
                ("usage", ["modelId": "model_id"]),
                ("root_document", ["createdAt": "created_at"]),
                ("arm_installation", ["modelId": "model_id"]),
                ("version_file", ["versionId": "version_id"]),
                ("console_session", ["keyId": "key_id", "startedAt": "started_at", "usedAt": "used_at"]),
                ("outcome", ["modelId": "model_id"]),
                ("outcome_batch", ["modelId": "model_id"]),
                ("experiment_metric", ["modelId": "model_id"]),
                ("rollout_guard", ["modelId": "model_id"]),
                ("version_patch", ["versionId": "version_id", "fromVersionId": "from_version_id", "fromSha256": "from_sha256"]),
            ]
            for (table, renames) in columns {
                try db.alter(table: table) { t in
                    for (old, new) in renames { t.rename(column: old, to: new) }
                }
            }
            // SQLite cannot rename an index: each is made again under its new name, from its own SQL.
            let indexes = [
                "version_on_modelId": "version_on_model_id", "versionFile_on_versionId": "version_file_on_version_id",
                "versionFile_on_sha256": "version_file_on_sha256", "versionPatch_on_fromVersionId": "version_patch_on_from_version_id",
                "versionPatch_on_sha256": "version_patch_on_sha256", "rolloutChange_on_modelId": "rollout_change_on_model_id",
                "usage_on_modelId": "usage_on_model_id", "armInstallation_on_modelId": "arm_installation_on_model_id",
                "consoleSession_on_keyId": "console_session_on_key_id", "experimentMetric_on_modelId": "experiment_metric_on_model_id",
                "outcomeAppended_on_modelId": "outcome_on_model_id", "outcomeBatch_id": "outcome_batch_id",
                "outcomeBatch_by_hour": "outcome_batch_by_hour",
            ]
            for (old, new) in indexes.sorted(by: { $0.key < $1.key }) {
                let definition = try String.fetchOne(
                    db, sql: "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", arguments: [old])
                guard let definition, let name = definition.range(of: "\"\(old)\"") else {
                    throw DepotError(.internalError, "The catalog database lacks its index '\(old)'. Restore depot.sqlite from a backup.")
                }
                try db.drop(index: old)
                try db.execute(sql: definition.replacingCharacters(in: name, with: "\"\(new)\""))
            }
        }
        migrator.registerMigration("v17: outcomes that count") { db in
            // 0 for rows from before exposure tokens: results and guards read only rows of a
            // network (``ClientNetwork``), whose events carried the server's token.
            try db.alter(table: "outcome") { t in t.add(column: "network", .integer).notNull().defaults(to: 0) }
            // A declared metric's cap as text (`5000`, `p99`; ``ExperimentMetric/Cap``), NULL for none.
            try db.alter(table: "experiment_metric") { t in t.add(column: "cap", .text) }
            // A model's guards have work while one runs or a webhook delivery is due, so that a
            // delivery is retried after its guard ended. A pending delivery's JSON names its next attempt.
            try db.alter(table: "rollout_guard") { t in t.rename(column: "running", to: "has_work") }
            try db.execute(sql: "UPDATE rollout_guard SET has_work = 1 WHERE document LIKE '%nextAttempt%'")
        }
        return migrator
    }
}
