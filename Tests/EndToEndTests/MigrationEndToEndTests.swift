import Foundation
import ModelDepot
import ModelDepotRollouts
import ModelDepotShared
import TestSupport
import Testing

/// `depot migrate` moves a one-server deployment into PostgreSQL and S3, and the replicated server
/// then serves the same models, keys, rollouts and signatures.
@Suite struct MigrationEndToEndTests {
    @Test func aStorageDirectoryMovesIntoPostgresAndS3AndKeepsServing() async throws {
        // A one-server deployment with three versions (one with companion files, the second with a
        // patch from the first), a rollout, an app key and root document v1
        let scratch = try Scratch()
        let storage = scratch.url.appendingPathComponent("storage")
        var single: ServerProcess? = try await ServerProcess(storage: storage, arguments: ["--patch-from", "3"])
        let env = single!.environment
        let root = try await single!.initializeRoot(keyFile: scratch.path("root.key"))
        try await Command.depot(["models", "create", "flowers", "--description", "Petals"], environment: env).succeeded()
        try await Command.depot(["upload", "flowers", Binaries.fixture("float_classifier"), "--publish"], environment: env).succeeded()
        try await Command.depot(["upload", "flowers", Binaries.fixture("int8_conv"), "--publish"], environment: env).succeeded()
        let automl = Binaries.repository.appendingPathComponent("Tests/Fixtures/automl/object_detection").path
        let withFiles = try await Command.depot(["upload", "flowers", automl, "--json"], environment: env).decode(ModelVersion.self)
        #expect(withFiles.files.map(\.name) == ["labels", "automl"])
        #expect(try await Command.depot(["rollout", "set", "flowers", "--default", "1"], environment: env).status == 0)
        let key = try await Command.depot(["keys", "create", "--app", "--json"], environment: env).decode(CreatedAccessKey.self).secret
        let before = try await Command.depot(["versions", "flowers", "--json"], environment: env).decode(ModelVersionList.self)
        let patches = { (server: ServerProcess) async throws in
            try await Command.depot(["versions", "flowers", "2", "--patches", "--json"], environment: server.environment).decode(
                VersionPatchList.self)
        }
        #expect(try await eventually { try await patches(single!).patches.count == 1 })
        let patched = try await patches(single!)
        #expect(patched.patches.first?.offered == true)
        // Outcomes of two versions of one arm, and a declared metric: version 1's with the
        // manifest's exposure token (counted), version 2's without (kept apart).
        try await Command.depot(["experiment", "metric", "add", "flowers", "accepted", "--kind", "proportion"], environment: env)
            .succeeded()
        let now = Int(Date().timeIntervalSince1970)
        var batches: [OutcomeBatch] = []
        for device in 0..<6 {
            let exposure = device < 3 ? try await Self.exposure(of: "device-\(device)", from: single!, key: key) : nil
            batches.append(
                OutcomeBatch(
                    batch: "00000000-0000-4000-8000-\(String(format: "%012d", device))", installation: "device-\(device)",
                    events: [
                        .init(metric: "accepted", version: device < 3 ? 1 : 2, arm: "default", at: now),
                        .init(metric: "free", version: device < 3 ? 1 : 2, arm: "default", at: now),
                    ], exposures: exposure.map { [.init(version: 1, arm: "default", token: $0)] } ?? []))
        }
        for batch in batches { try await Self.send(batch, to: single!, key: key) }
        let results = try await Command.depot(["experiment", "show", "flowers", "--json"], environment: env).decode(ExperimentResults.self)
        #expect(results.arms.first?.installations == ["1": 3] && results.arms.first?.uncounted == ["2": 3])
        try await single!.stop(signal: SIGTERM)
        single = nil

        let database = try await TestPostgres.freshDatabase()
        let s3 = try TestS3.settings()
        let blobs = s3.freshURL()
        let migrated = try await Command.depot(
            ["migrate", "--from", storage.path, "--to-database", database, "--to-blobs", blobs, "--json"],
            environment: s3.environment)
        #expect(migrated.status == 0, "\(migrated.error)")
        let bytes = before.versions.map { $0.size + $0.files.map(\.size).reduce(0, +) }.reduce(0, +) + patched.patches[0].size
        #expect(try migrated.decode(MigrationReport.self) == MigrationReport(models: 1, versions: 3, keys: 2, blobs: 6, bytes: bytes))

        let again = try await Command.depot(
            ["migrate", "--from", storage.path, "--to-database", database, "--to-blobs", blobs], environment: s3.environment)
        #expect(again.status == 1)
        #expect(again.error.contains("already holds 1 model(s)"), "\(again.error)")

        // The replicated server serves what the single one did: versions, rollout, the app key and the signing key
        let replica = try await ServerProcess(
            storage: scratch.url.appendingPathComponent("replica"), arguments: ["--database", database, "--blobs", blobs],
            environment: s3.environment)
        let after = try await Command.depot(["versions", "flowers", "--json"], environment: replica.environment).decode(
            ModelVersionList.self)
        #expect(after == before)
        await #expect(try patches(replica) == patched, "the patch moved")
        #expect(!before.versions.isEmpty && before.versions.allSatisfy { $0.uploadedBy != nil }, "who uploaded each version moved too")
        let moved = try await Command.depot(["experiment", "show", "flowers", "--json"], environment: replica.environment).decode(
            ExperimentResults.self)
        #expect(moved.arms == results.arms && moved.metrics == results.metrics, "outcomes and metrics moved")
        try await Self.send(batches[0], to: replica, key: key)
        await #expect(
            try Command.depot(["experiment", "show", "flowers", "--json"], environment: replica.environment)
                .decode(ExperimentResults.self).arms == results.arms, "a batch applied before the move is not counted again")
        // An installation seen before the move is the same one after it: its id is stored under
        // the identifier key, which moved with the catalog.
        let again0 = OutcomeBatch(
            batch: "00000000-0000-4000-8000-000000000100", installation: "device-0",
            events: [.init(metric: "accepted", version: 1, arm: "default", at: now)],
            exposures: [.init(version: 1, arm: "default", token: try await Self.exposure(of: "device-0", from: replica, key: key))])
        try await Self.send(again0, to: replica, key: key)
        await #expect(
            try Command.depot(["experiment", "show", "flowers", "--json"], environment: replica.environment)
                .decode(ExperimentResults.self).arms.first?.installations == ["1": 3], "device-0 is not a new installation")
        let downloader = try ModelDownloader(
            configuration: ModelDownloaderConfiguration(
                serverURL: replica.url, appKey: key, trustedRoot: .publicKey(root.publicKey),
                cacheDirectory: scratch.url.appendingPathComponent("cache")))
        let model = try await downloader.model(named: "flowers")
        #expect(model.version == 1, "the rollout's default, under the manifest key root v1 lists")
        #expect(try Data(contentsOf: model.fileURL) == Data(contentsOf: URL(fileURLWithPath: Binaries.fixture("float_classifier"))))
    }

    @Test func aChangedBlobStopsTheMigrationBeforeTheCatalog() async throws {
        let scratch = try Scratch()
        let storage = scratch.url.appendingPathComponent("storage")
        var single: ServerProcess? = try await ServerProcess(storage: storage)
        try await Command.depot(["models", "create", "flowers"], environment: single!.environment).succeeded()
        let version = try await Command.depot(
            ["upload", "flowers", Binaries.fixture("float_classifier"), "--json"], environment: single!.environment
        )
        .decode(ModelVersion.self)
        try await single!.stop(signal: SIGTERM)
        single = nil
        let blob = storage.appendingPathComponent("blobs/sha256/\(version.sha256.prefix(2))/\(version.sha256)")
        var bytes = try Data(contentsOf: blob)
        bytes[100] ^= 0xff
        try bytes.write(to: blob)

        let database = try await TestPostgres.freshDatabase()
        let s3 = try TestS3.settings()
        let refused = try await Command.depot(
            ["migrate", "--from", storage.path, "--to-database", database, "--to-blobs", s3.freshURL()],
            environment: s3.environment)
        #expect(refused.status == 1)
        #expect(refused.error.contains("Blob \(version.sha256) in '\(storage.path)' hashes to"), "\(refused.error)")
        await #expect(try TestPostgres.query(database, "SELECT count(*) FROM model") == "0", "nothing reached the database")
    }

    /// Posts an outcome batch with curl; fails unless the server answers 200.
    /// The exposure token of `installation`'s manifest answer.
    static func exposure(of installation: String, from server: ServerProcess, key: String) async throws -> String {
        let answer = try await Command.curl([
            "-s", "-o", "/dev/null", "-w", "%header{\(DepotHeader.exposure)}", "-H", "Authorization: Bearer \(key)",
            "-H", "\(DepotHeader.installationID): \(installation)", "\(server.url.absoluteString)/v1/models/flowers/manifest",
        ])
        #expect(!answer.text.isEmpty, "\(answer.error)")
        return answer.text
    }

    static func send(_ batch: OutcomeBatch, to server: ServerProcess, key: String) async throws {
        let body = String(decoding: try JSONEncoder().encode(batch), as: UTF8.self)
        let answer = try await Command.curl([
            "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer \(key)",
            "-H", "Content-Type: application/json", "--data-binary", body,
            "\(server.url.absoluteString)/v1/models/flowers/events",
        ])
        #expect(answer.text == "200", "\(answer.error)")
    }
}
