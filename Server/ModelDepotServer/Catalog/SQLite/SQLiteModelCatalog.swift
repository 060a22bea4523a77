import Foundation
import GRDB
import ModelDepotRollouts
import ModelDepotShared

/// The catalog in an embedded SQLite database (GRDB `DatabasePool`, WAL, `synchronous=FULL`).
public struct SQLiteModelCatalog: ModelCatalog {
    let database: DatabasePool
    /// The hourly limit's counts (``SQLiteHourlyEvents``).
    let hourlyEvents = SQLiteHourlyEvents()

    /// Opens (creating and migrating) the database file.
    /// - Parameter path: The SQLite file, e.g. `storage/depot.sqlite`.
    /// - Throws: ``DepotError`` when the file cannot be opened or migrated.
    public init(path: String) throws {
        do {
            try Self.restrictPermissions(path)
            database = try DatabasePool(path: path)
            // GRDB sets the writer to `synchronous=NORMAL` when it turns WAL on (after
            // `prepareDatabase`): set FULL afterwards, so that a commit is on the disk before
            // anyone is told of it.
            try database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
            let migrator = SQLiteCatalogMigrations.migrator
            // On the writer: a reader connection used before the migrations would keep the old
            // column names and fail to decode the renamed rows.
            let unknown = try database.writeWithoutTransaction { db in
                try migrator.appliedIdentifiers(db).subtracting(migrator.migrations)
            }
            guard unknown.isEmpty else {
                throw DepotError(
                    .internalError,
                    "The catalog database '\(path)' has schema changes from a newer depot (\(unknown.sorted().joined(separator: ", "))); this one knows up to '\(migrator.migrations.last ?? "")'. Run the newer depot (or restore a backup taken before the upgrade)."
                )
            }
            try migrator.migrate(database)
        } catch let error as DepotError {
            throw error
        } catch {
            throw DepotError(
                .internalError, "Could not open the catalog database '\(path)'. Check the storage directory.", cause: "\(error)")
        }
    }

    /// Creates the database file with mode 0600 (SQLite gives its WAL and shared-memory files
    /// the same mode) or restricts the files an earlier version left readable to others.
    private static func restrictPermissions(_ path: String) throws {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw DepotError(.internalError, "Could not create '\(path)'.", cause: String(cString: strerror(errno)))
        }
        close(descriptor)
        for file in [path, path + "-wal", path + "-shm"] where access(file, F_OK) == 0 {
            guard chmod(file, 0o600) == 0 else {
                throw DepotError(
                    .internalError, "Could not restrict the permissions of '\(file)'.", cause: String(cString: strerror(errno)))
            }
        }
    }

    public func createModel(_ creation: ModelCreation, at date: Date) async throws -> ModelSummary {
        try await write { db in
            guard try ModelRecord.filter(ModelRecord.Columns.name == creation.name.rawValue).fetchOne(db) == nil else {
                throw CatalogRule.modelExists(creation.name)
            }
            var record = ModelRecord(
                id: nil, name: creation.name.rawValue, description: creation.description ?? "",
                tags: creation.tags ?? [], createdAt: date, lastVersionNumber: 0)
            try record.insert(db)
            try Self.advanceManifestVersion(record.name, at: date, db)
            return try summary(of: record, db)
        }
    }

    public func models() async throws -> [ModelSummary] {
        try await read { db in
            try ModelRecord.order(ModelRecord.Columns.name).fetchAll(db).map { try summary(of: $0, db) }
        }
    }

    public func model(_ name: ModelName) async throws -> ModelSummary {
        try await read { db in try summary(of: try modelRecord(name, db), db) }
    }

    public func versions(of name: ModelName) async throws -> [ModelVersion] {
        try await read { db in
            let model = try modelRecord(name, db)
            return try VersionRecord.filter(VersionRecord.Columns.modelId == model.id)
                .order(VersionRecord.Columns.number.desc).fetchAll(db).map { try version($0, of: name, db) }
        }
    }

    public func version(_ number: Int, of name: ModelName) async throws -> ModelVersion {
        try await read { db in try version(try versionRecord(number, of: try modelRecord(name, db), db), of: name, db) }
    }

    public func newestPublishedVersion(of name: ModelName) async throws -> ModelVersion? {
        try await read { db in
            let model = try modelRecord(name, db)
            return try VersionRecord.filter(VersionRecord.Columns.modelId == model.id && VersionRecord.Columns.published == true)
                .order(VersionRecord.Columns.number.desc).fetchOne(db).map { try version($0, of: name, db) }
        }
    }

    public func blobReferences() async throws -> [BlobReference] {
        try await read { db in
            var references: [String: BlobReference] = [:]
            let rows = try Row.fetchCursor(db, sql: CatalogQueries.blobReferences)
            while let row = try rows.next() {
                let sha256: String = row[0]
                let name = try ModelName(row[2] as String)
                references[sha256, default: BlobReference(sha256: sha256, size: row[1], models: [])].models.append(name)
            }
            return Array(references.values)
        }
    }

    public func rollout(of name: ModelName) async throws -> Rollout {
        try await read { db in try rolloutDocument(of: try modelRecord(name, db), db) }
    }

    public func rolloutGuards(of name: ModelName) async throws -> [StoredRolloutGuard] {
        try await read { db in try RolloutGuardRecord.fetchOne(db, key: try modelRecord(name, db).id)?.document ?? [] }
    }

    public func modelsWithGuardWork() async throws -> [ModelName] {
        try await read { db in
            try String.fetchAll(
                db, sql: "SELECT name FROM model JOIN rollout_guard ON rollout_guard.model_id = model.id WHERE has_work ORDER BY name"
            )
            .map { try ModelName($0) }
        }
    }

    public func rolloutHistory(of name: ModelName) async throws -> [RolloutChange] {
        try await read { db in
            let model = try modelRecord(name, db)
            return try RolloutChangeRecord.filter(RolloutChangeRecord.Columns.modelId == model.id)
                .order(RolloutChangeRecord.Columns.id).fetchAll(db)
                .map { RolloutChange(keyID: $0.keyId, at: $0.at, before: $0.before, after: $0.after, reason: $0.reason) }
        }
    }

    public func recordUsage(_ counts: [UsageCounter.Key: Int], installations: [UsageCounter.Installation: Int]) async throws {
        guard !counts.isEmpty || !installations.isEmpty else { return }
        // Counts wait in memory for the next flush anyway: a power failure loses the last of
        // them either way, and the commit need not wait for the disk (nor make batches wait).
        try await writeWithoutWaitingForTheDisk { db in
            let insert = try db.cachedStatement(
                sql: """
                    INSERT OR IGNORE INTO arm_installation (model_id, arm, version, installation, minute)
                    SELECT id, ?, ?, ?, ? FROM model WHERE name = ?
                    """)
            for (seen, minute) in installations {
                try insert.execute(arguments: [seen.arm.stored, seen.version, seen.installation, minute, seen.model.rawValue])
            }
            let upsert = try db.cachedStatement(
                sql: """
                    INSERT INTO usage (model_id, version, arm, kind, minute, count) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (model_id, version, arm, kind, minute) DO UPDATE SET count = count + excluded.count
                    """)
            for (key, count) in counts {
                let targets: [Row]
                switch key.subject {
                case .manifest(let model, let version):
                    targets = try Row.fetchAll(
                        db, sql: "SELECT id AS model_id, ? AS number FROM model WHERE name = ?",
                        arguments: [version, model.rawValue])
                case .download(let sha256):
                    targets = try Row.fetchAll(db, sql: "SELECT model_id, number FROM version WHERE sha256 = ?", arguments: [sha256])
                }
                for target in targets {
                    try upsert.execute(arguments: [
                        target["model_id"] as Int64, target["number"] as Int, key.arm.stored,
                        key.kind.rawValue, key.minute, count,
                    ])
                }
            }
        }
    }

    public func usage(of name: ModelName, sinceMinute minute: Int) async throws -> [UsageRow] {
        try await read { db in
            let model = try modelRecord(name, db)
            return try Row.fetchAll(
                db, sql: "SELECT version, arm, kind, minute, count FROM usage WHERE model_id = ? AND minute >= ?",
                arguments: [model.id, minute]
            ).map {
                UsageRow(
                    version: $0["version"], arm: CountedArm(stored: $0["arm"]), kind: try UsageKind(stored: $0["kind"]),
                    minute: $0["minute"], count: $0["count"])
            }
        }
    }

    public func installations(of name: ModelName, sinceMinute minute: Int) async throws -> [InstallationCount] {
        try await read { db in
            let model = try modelRecord(name, db)
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT arm, version, COUNT(*) AS count FROM arm_installation WHERE model_id = ? AND minute >= ? GROUP BY arm, version
                    """, arguments: [model.id, minute]
            ).map { InstallationCount(arm: CountedArm(stored: $0["arm"]), version: $0["version"], count: $0["count"]) }
        }
    }

    public func createKey(_ key: AccessKey, secretHash: [UInt8]) async throws {
        try await write { db in
            guard try AccessKeyRecord.fetchOne(db, key: key.id) == nil else { throw CatalogRule.keyExists(key.id) }
            try AccessKeyRecord(
                id: key.id, kind: key.kind.rawValue, name: key.name, models: key.models?.map(\.rawValue),
                secretHash: Data(secretHash), createdAt: key.createdAt, revokedAt: key.revokedAt
            ).insert(db)
        }
    }

    public func keys() async throws -> [AccessKey] {
        try await read { db in try AccessKeyRecord.order(AccessKeyRecord.Columns.createdAt).fetchAll(db).map { try $0.key() } }
    }

    public func key(id: String) async throws -> (key: AccessKey, secretHash: [UInt8])? {
        try await read { db in
            try AccessKeyRecord.fetchOne(db, key: id).map { (try $0.key(), Array($0.secretHash)) }
        }
    }

    public func workingKeys() async throws -> [(key: AccessKey, secretHash: [UInt8])] {
        try await read { db in
            try AccessKeyRecord.filter(sql: "revoked_at IS NULL").fetchAll(db).map { (try $0.key(), Array($0.secretHash)) }
        }
    }

    public func changeKey(id: String, _ change: @escaping @Sendable (_ key: AccessKey, _ workingAdminTokens: Int) throws -> AccessKey)
        async throws -> AccessKey
    {
        try await write { db in
            guard var record = try AccessKeyRecord.fetchOne(db, key: id) else { throw CatalogRule.noKey(id) }
            let working = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM access_key WHERE kind = 'admin' AND revoked_at IS NULL") ?? 0
            let changed = try change(try record.key(), working)
            if changed.revokedAt != record.revokedAt {
                record.revokedAt = changed.revokedAt
                try record.update(db)
            }
            return try record.key()
        }
    }

    // MARK: - Helpers

    private func summary(of model: ModelRecord, _ db: Database) throws -> ModelSummary {
        let row = try Row.fetchOne(
            db,
            sql: """
                SELECT COUNT(*) AS count, MAX(number) AS latest, MAX(CASE WHEN published THEN number END) AS published
                FROM version WHERE model_id = ?
                """, arguments: [model.id])
        return ModelSummary(
            name: try ModelName(model.name), description: model.description, tags: model.tags,
            createdAt: model.createdAt, versionCount: row?["count"] ?? 0,
            latestVersion: row?["latest"], publishedVersion: row?["published"])
    }

    private func rolloutDocument(of model: ModelRecord, _ db: Database) throws -> Rollout {
        try RolloutRecord.fetchOne(db, key: model.id)?.document ?? Rollout()
    }

    func modelRecord(_ name: ModelName, _ db: Database) throws -> ModelRecord {
        guard let model = try ModelRecord.filter(ModelRecord.Columns.name == name.rawValue).fetchOne(db) else {
            throw CatalogRule.noModel(name)
        }
        return model
    }

    private func versionRecord(_ number: Int, of model: ModelRecord, _ db: Database) throws -> VersionRecord {
        guard
            let record = try VersionRecord.filter(VersionRecord.Columns.modelId == model.id && VersionRecord.Columns.number == number)
                .fetchOne(db)
        else {
            throw CatalogRule.noVersion(number, of: model.name)
        }
        return record
    }

    func unreferenced(_ digests: Set<String>, _ db: Database) throws -> Set<String> {
        try digests.filter {
            try VersionRecord.filter(VersionRecord.Columns.sha256 == $0).fetchCount(db) == 0
                && VersionFileRecord.filter(VersionFileRecord.Columns.sha256 == $0).fetchCount(db) == 0
                && Int.fetchOne(db, sql: "SELECT COUNT(*) FROM version_patch WHERE sha256 = ?", arguments: [$0]) == 0
        }
    }

    /// The offered patches' digests to or from the versions with these ids (deleted with them).
    func patchDigests(of versionIDs: [Int64], _ db: Database) throws -> [String] {
        guard !versionIDs.isEmpty else { return [] }
        let ids = versionIDs.map(String.init).joined(separator: ",")
        return try String.fetchAll(
            db,
            sql: """
                SELECT sha256 FROM version_patch WHERE sha256 IS NOT NULL AND (version_id IN (\(ids)) OR from_version_id IN (\(ids)))
                """)
    }

    /// A version with its companion files, in upload order.
    private func version(_ record: VersionRecord, of name: ModelName, _ db: Database) throws -> ModelVersion {
        let files = try VersionFileRecord.filter(VersionFileRecord.Columns.versionId == record.id)
            .order(VersionFileRecord.Columns.position).fetchAll(db).map { try $0.file() }
        return record.version(of: name, files: files)
    }

    func read<T: Sendable>(_ body: @Sendable @escaping (Database) throws -> T) async throws -> T {
        do { return try await database.read(body) } catch { throw Self.mapped(error) }
    }

    func write<T: Sendable>(_ body: @Sendable @escaping (Database) throws -> T) async throws -> T {
        do { return try await database.write(body) } catch { throw Self.mapped(error) }
    }

    /// A write whose commit does not wait for the disk: `synchronous=NORMAL` for its transaction
    /// alone. In WAL mode the database stays consistent and a crash of the process loses nothing;
    /// a power failure can lose the transactions since the last synced commit or checkpoint.
    /// Outcome batches use it, so that devices are not answered at the disk's pace, and usage
    /// flushes, whose counts wait in memory until then anyway.
    func writeWithoutWaitingForTheDisk<T: Sendable>(_ body: @Sendable @escaping (Database) throws -> T) async throws -> T {
        do {
            return try await database.writeWithoutTransaction { db in
                try db.cachedStatement(sql: "PRAGMA synchronous = NORMAL").execute()
                defer { try? db.cachedStatement(sql: "PRAGMA synchronous = FULL").execute() }
                var result: T?
                try db.inTransaction {
                    result = try body(db)
                    return .commit
                }
                guard let result else { throw DepotError(.internalError, "A catalog transaction ended without a result.") }
                return result
            }
        } catch {
            throw Self.mapped(error)
        }
    }

    private static func mapped(_ error: any Error) -> any Error {
        if error is DepotError { return error }
        if let error = error as? DatabaseError, error.resultCode == .SQLITE_FULL { return FileSystemBlobStore.storageFull }
        return DepotError(.internalError, "The catalog database failed.", cause: "\(error)")
    }
}
