import Logging
import ModelDepotShared
import PostgresNIO

/// The PostgreSQL catalog's schema: the same tables and invariants as the SQLite one
/// (``CatalogMigrations``), one numbered migration per change.
///
/// Every replica applies what is missing at start, in one transaction holding an advisory lock:
/// replicas starting together wait for each other, and each migration runs once.
enum PostgresCatalogMigrations {
    /// The advisory lock's key (any constant the schema's users agree on): "depot" in ASCII.
    static let lockKey: Int64 = 0x6465_706F_74

    static let migrations: [(version: Int, name: String, statements: [String])] = [
        (
            1, "models, versions, keys",
            [
                """
                CREATE TABLE model (
                    id bigserial PRIMARY KEY,
                    name text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 64 AND name ~ '^[a-z0-9][a-z0-9._-]*$'),
                    description text NOT NULL DEFAULT '',
                    tags jsonb NOT NULL DEFAULT '[]',
                    created_at timestamptz NOT NULL,
                    last_version_number integer NOT NULL DEFAULT 0 CHECK (last_version_number >= 0)
                )
                """,
                """
                CREATE TABLE version (
                    id bigserial PRIMARY KEY,
                    model_id bigint NOT NULL REFERENCES model (id) ON DELETE CASCADE,
                    number integer NOT NULL CHECK (number >= 1),
                    sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
                    size bigint NOT NULL CHECK (size >= 0),
                    notes text NOT NULL DEFAULT '',
                    published boolean NOT NULL DEFAULT false,
                    created_at timestamptz NOT NULL,
                    published_at timestamptz,
                    tflite jsonb NOT NULL,
                    UNIQUE (model_id, number)
                )
                """,
                "CREATE INDEX version_on_sha256 ON version (sha256)",
                """
                CREATE TABLE access_key (
                    id text PRIMARY KEY,
                    kind text NOT NULL CHECK (kind IN ('admin', 'app')),
                    name text NOT NULL DEFAULT '',
                    models jsonb,
                    secret_hash bytea NOT NULL CHECK (length(secret_hash) = 32),
                    created_at timestamptz NOT NULL,
                    revoked_at timestamptz
                )
                """,
            ]
        ),
        (
            2, "rollouts and their audit log",
            [
                """
                CREATE TABLE rollout (
                    model_id bigint PRIMARY KEY REFERENCES model (id) ON DELETE CASCADE,
                    document jsonb NOT NULL,
                    updated_at timestamptz NOT NULL
                )
                """,
                """
                CREATE TABLE rollout_change (
                    id bigserial PRIMARY KEY,
                    model_id bigint NOT NULL REFERENCES model (id) ON DELETE CASCADE,
                    key_id text NOT NULL,
                    at timestamptz NOT NULL,
                    before jsonb NOT NULL,
                    after jsonb NOT NULL
                )
                """,
                "CREATE INDEX rollout_change_on_model ON rollout_change (model_id, id)",
            ]
        ),
        (
            3, "usage counts and installations per arm",
            [
                """
                CREATE TABLE usage (
                    model_id bigint NOT NULL REFERENCES model (id) ON DELETE CASCADE,
                    version integer NOT NULL,
                    arm text NOT NULL,
                    kind text NOT NULL CHECK (kind IN ('manifest', 'download')),
                    minute bigint NOT NULL,
                    count bigint NOT NULL CHECK (count > 0),
                    PRIMARY KEY (model_id, version, arm, kind, minute)
                )
                """,
                // One row per installation (a 64-bit hash of its id), arm and version, with the
                // minute it was first seen there (see the SQLite migration v6).
                """
                CREATE TABLE arm_installation (
                    model_id bigint NOT NULL REFERENCES model (id) ON DELETE CASCADE,
                    arm text NOT NULL,
                    version integer NOT NULL,
                    installation bigint NOT NULL,
                    minute bigint NOT NULL,
                    PRIMARY KEY (model_id, arm, version, installation)
                )
                """,
            ]
        ),
        (
            4, "signed manifests: versions per name, root documents",
            [
                "CREATE TABLE manifest_sequence (name text PRIMARY KEY, last bigint NOT NULL CHECK (last >= 1))",
                """
                CREATE TABLE root_document (
                    version integer PRIMARY KEY CHECK (version >= 1),
                    envelope bytea NOT NULL,
                    created_at timestamptz NOT NULL
                )
                """,
            ]
        ),
        (
            5, "changes for the other replicas",
            [
                """
                CREATE TABLE change_event (
                    id bigserial PRIMARY KEY,
                    kind text NOT NULL CHECK (kind IN ('model', 'keys', 'root', 'signing')),
                    name text NOT NULL DEFAULT '',
                    at timestamptz NOT NULL DEFAULT clock_timestamp()
                )
                """,
                "CREATE INDEX change_event_on_at ON change_event (at)",
            ]
        ),
        (
            6, "online manifest keys shared by the replicas",
            [
                """
                CREATE TABLE signing_key (
                    keyid text PRIMARY KEY,
                    role text NOT NULL CHECK (role IN ('active', 'pending')),
                    private_key bytea NOT NULL CHECK (length(private_key) = 32),
                    created_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                "CREATE UNIQUE INDEX signing_key_one_per_role ON signing_key (role)",
            ]
        ),
        (
            7, "companion files",
            [
                """
                CREATE TABLE version_file (
                    version_id bigint NOT NULL REFERENCES version (id) ON DELETE CASCADE,
                    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 64 AND name ~ '^[a-z0-9][a-z0-9._-]*$'),
                    sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
                    size bigint NOT NULL CHECK (size >= 0),
                    position integer NOT NULL CHECK (position >= 0),
                    PRIMARY KEY (version_id, name)
                )
                """,
                "CREATE INDEX version_file_on_sha256 ON version_file (sha256)",
            ]
        ),
        (8, "who uploaded a version", ["ALTER TABLE version ADD COLUMN uploaded_by text"]),
        (
            9, "console sessions",
            [
                """
                CREATE TABLE console_session (
                    id text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{64}$'),
                    key_id text NOT NULL REFERENCES access_key (id) ON DELETE CASCADE,
                    started_at timestamptz NOT NULL,
                    used_at timestamptz NOT NULL
                )
                """,
                "CREATE INDEX console_session_on_key_id ON console_session (key_id)",
            ]
        ),
        (
            10, "experiment outcomes",
            [
                // See the SQLite migration v10.
                """
                CREATE TABLE outcome (
                    model_id bigint NOT NULL REFERENCES model (id) ON DELETE CASCADE,
                    metric text NOT NULL,
                    arm text NOT NULL,
                    version integer NOT NULL,
                    hour bigint NOT NULL,
                    installation bigint NOT NULL,
                    count bigint NOT NULL CHECK (count >= 0),
                    sum double precision NOT NULL,
                    PRIMARY KEY (model_id, installation, metric, arm, version, hour)
                )
                """,
                """
                CREATE TABLE outcome_exposure (
                    model_id bigint NOT NULL REFERENCES model (id) ON DELETE CASCADE,
                    arm text NOT NULL,
                    version integer NOT NULL,
                    installation bigint NOT NULL,
                    hour bigint NOT NULL,
                    PRIMARY KEY (model_id, arm, version, installation)
                )
                """,
                """
                CREATE TABLE outcome_batch (
                    model_id bigint NOT NULL REFERENCES model (id) ON DELETE CASCADE,
                    id text NOT NULL,
                    hour bigint NOT NULL,
                    PRIMARY KEY (model_id, id)
                )
                """,
                "CREATE INDEX outcome_batch_on_hour ON outcome_batch (hour)",
                """
                CREATE TABLE outcome_quota (
                    model_id bigint NOT NULL REFERENCES model (id) ON DELETE CASCADE,
                    installation bigint NOT NULL,
                    hour bigint NOT NULL,
                    events bigint NOT NULL,
                    PRIMARY KEY (model_id, installation, hour)
                )
                """,
                "CREATE INDEX outcome_quota_on_hour ON outcome_quota (hour)",
                """
                CREATE TABLE experiment_metric (
                    model_id bigint NOT NULL REFERENCES model (id) ON DELETE CASCADE,
                    name text NOT NULL,
                    kind text NOT NULL CHECK (kind IN ('proportion', 'sum', 'mean')),
                    direction text NOT NULL CHECK (direction IN ('increase', 'decrease')),
                    tolerance double precision NOT NULL,
                    guardrail boolean NOT NULL,
                    declared boolean NOT NULL,
                    PRIMARY KEY (model_id, name)
                )
                """,
            ]
        ),
        (
            11, "guarded rollouts",
            [
                // See the SQLite migration v11.
                """
                CREATE TABLE rollout_guard (
                    model_id bigint PRIMARY KEY REFERENCES model (id) ON DELETE CASCADE,
                    document jsonb NOT NULL,
                    running boolean NOT NULL
                )
                """,
                "ALTER TABLE rollout_change ADD COLUMN reason text",
            ]
        ),
        (
            12, "patches",
            [
                // See the SQLite migration v12.
                """
                CREATE TABLE version_patch (
                    version_id bigint NOT NULL REFERENCES version (id) ON DELETE CASCADE,
                    from_version_id bigint NOT NULL REFERENCES version (id) ON DELETE CASCADE,
                    file text NOT NULL CHECK (length(file) <= 64),
                    from_sha256 text NOT NULL CHECK (from_sha256 ~ '^[0-9a-f]{64}$'),
                    sha256 text CHECK (sha256 ~ '^[0-9a-f]{64}$'),
                    size bigint NOT NULL CHECK (size >= 0),
                    PRIMARY KEY (version_id, from_version_id, file)
                )
                """,
                "CREATE INDEX version_patch_on_from_version_id ON version_patch (from_version_id)",
                "CREATE INDEX version_patch_on_sha256 ON version_patch (sha256)",
            ]
        ),
        (
            13, "outcomes that count",
            [
                // See the SQLite migration v17. Only columns are added, so that replicas of the
                // version before, still serving during a rolling upgrade, keep writing: their
                // rows count 0 (no network), and they keep `running` up to date, which this
                // version reads beside `has_work` and writes as well.
                "ALTER TABLE outcome ADD COLUMN network bigint NOT NULL DEFAULT 0",
                "ALTER TABLE outcome_exposure ADD COLUMN network bigint NOT NULL DEFAULT 0",
                "ALTER TABLE experiment_metric ADD COLUMN cap text",
                "ALTER TABLE rollout_guard ADD COLUMN has_work boolean NOT NULL DEFAULT false",
                "UPDATE rollout_guard SET has_work = running OR document::text LIKE '%nextAttempt%'",
            ]
        ),
        (
            14, "the key installation ids and client networks are stored under",
            ["CREATE TABLE identifier_secret (id integer PRIMARY KEY CHECK (id = 1), secret bytea NOT NULL)"]
        ),
    ]

    /// Applies every migration the database lacks.
    /// - Returns: The versions this call applied (empty when another replica had done it).
    @discardableResult
    static func migrate(_ client: PostgresClient, logger: Logger) async throws -> [Int] {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS depot_migration (
                    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                """, logger: logger)
            var applied = Set<Int>()
            for try await version in try await connection.query("SELECT version FROM depot_migration", logger: logger).decode(Int.self) {
                applied.insert(version)
            }
            let known = migrations.map(\.version).max() ?? 0
            if let newest = applied.max(), newest > known {
                throw DepotError(
                    .internalError,
                    "The catalog database has schema version \(newest), from a newer depot; this one knows up to \(known). Run the newer depot (or restore a backup taken before the upgrade)."
                )
            }
            var done: [Int] = []
            for migration in migrations where !applied.contains(migration.version) {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO depot_migration (version, name) VALUES (\(migration.version), \(migration.name))",
                    logger: logger)
                done.append(migration.version)
            }
            return done
        }
    }
}
