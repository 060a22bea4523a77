import Foundation
import ModelDepot
import ModelDepotShared
import TestSupport
import Testing

/// Two `depot serve` replicas sharing one PostgreSQL catalog and one S3 prefix: a change made
/// through one is served by the other within a second, and both sign the same state with the same
/// manifest version.
@Suite struct ReplicaCoherenceEndToEndTests {
    struct Replicas {
        let scratch: Scratch
        let first: ServerProcess
        let second: ServerProcess
    }

    static func start() async throws -> Replicas {
        let s3 = try TestS3.settings()
        let arguments = ["--database", try await TestPostgres.freshDatabase(), "--blobs", s3.freshURL()]
        let scratch = try Scratch()
        let first = try await ServerProcess(
            storage: scratch.url.appendingPathComponent("first"), arguments: arguments, environment: s3.environment)
        let second = try await ServerProcess(
            storage: scratch.url.appendingPathComponent("second"), arguments: arguments, environment: s3.environment)
        return Replicas(scratch: scratch, first: first, second: second)
    }

    func manifest(_ server: ServerProcess, key: String) async throws -> (status: String, manifest: ModelManifest?) {
        let answer = try await Command.curl([
            "-w", "\n%{http_code}", "-H", "Authorization: Bearer \(key)", "-H", "Depot-Installation-ID: device-1",
            "\(server.url.absoluteString)/v1/models/flowers/manifest",
        ])
        let status = String(answer.text.split(separator: "\n").last ?? "")
        let body = answer.output.dropLast(status.utf8.count + 1)
        return (status, status == "200" ? try manifestPayload(Data(body)) : nil)
    }

    @Test func aChangeThroughOneReplicaIsServedByTheOtherWithinASecond() async throws {
        let replicas = try await Self.start()
        let admin = replicas.first.environment
        try await Command.depot(["models", "create", "flowers"], environment: admin).succeeded()
        for fixture in ["float_classifier", "int8_conv"] {
            let uploaded = try await Command.depot(["upload", "flowers", Binaries.fixture(fixture), "--publish"], environment: admin)
            #expect(uploaded.status == 0, "\(uploaded.error)")
        }
        let key = try await Command.depot(["keys", "create", "--app", "--json"], environment: admin).decode(CreatedAccessKey.self).secret
        let before = try await #require(try manifest(replicas.second, key: key).manifest)
        #expect(before.version == 2, "the other replica serves what the first stored")
        await #expect(
            try manifest(replicas.first, key: key).manifest?.manifestVersion == before.manifestVersion,
            "both replicas sign the same state with the same manifest version")

        let set = try await Command.depot(["rollout", "set", "flowers", "--default", "1"], environment: admin)
        #expect(set.status == 0, "\(set.error)")
        let rolledBack = try await timeUntil { try await manifest(replicas.second, key: key).manifest?.version == 1 }
        #expect(
            rolledBack.map { $0 < 1 } == true,
            "the rollout change reached the other replica after \(rolledBack.map { "\($0) s" } ?? "more than 10 s")")
        let after = try await #require(try manifest(replicas.second, key: key).manifest)
        #expect(after.manifestVersion > before.manifestVersion)
        await #expect(try manifest(replicas.first, key: key).manifest?.manifestVersion == after.manifestVersion)

        let id = try #require(key.split(separator: "_").dropFirst().first)
        await #expect(try Command.depot(["keys", "revoke", String(id)], environment: admin).status == 0)
        let revoked = try await timeUntil { try await manifest(replicas.second, key: key).status == "401" }
        #expect(
            revoked.map { $0 < 1 } == true,
            "the revocation reached the other replica after \(revoked.map { "\($0) s" } ?? "more than 10 s")")
    }
}

extension ReplicaCoherenceEndToEndTests {
    /// The online manifest key lives in the shared catalog: a root document made through one
    /// replica trusts every replica's manifests, and a rotation made through another reaches all.
    @Test func everyReplicaSignsWithTheSharedKeyAndARotationThroughAnyReachesAll() async throws {
        let replicas = try await Self.start()
        let first = replicas.first.environment, second = replicas.second.environment
        let root = try await replicas.first.initializeRoot(keyFile: replicas.scratch.path("root.key"))
        try await Command.depot(["models", "create", "flowers"], environment: first).succeeded()
        try await Command.depot(["upload", "flowers", Binaries.fixture("float_classifier"), "--publish"], environment: first).succeeded()
        let key = try await Command.depot(["keys", "create", "--app", "--json"], environment: first).decode(CreatedAccessKey.self).secret
        let downloader = try ModelDownloader(
            configuration: ModelDownloaderConfiguration(
                serverURL: replicas.second.url, appKey: key, trustedRoot: .publicKey(root.publicKey),
                cacheDirectory: replicas.scratch.url.appendingPathComponent("cache")))
        #expect(
            try await downloader.model(named: "flowers").version == 1, "the second replica's manifest is signed by the key root v1 lists")

        let rotated = try await Command.depot(["keys", "rotate", "--root-key", root.file], environment: second)
        #expect(rotated.status == 0, "\(rotated.error)")
        try await Command.depot(["upload", "flowers", Binaries.fixture("int8_conv"), "--publish"], environment: first).succeeded()
        func signing(_ server: ServerProcess) async throws -> SigningStatus {
            try await JSONDecoder().decode(
                SigningStatus.self,
                from: Command.curl([
                    "-H", "Authorization: Bearer \(ServerProcess.adminToken)",
                    "\(server.url.absoluteString)/v1/admin/signing",
                ]).output)
        }
        let onSecond = try await signing(replicas.second)
        #expect(onSecond.rootVersion == 2)
        let switched = try await timeUntil { try await signing(replicas.first).active == onSecond.active }
        #expect(
            switched.map { $0 < 1 } == true,
            "the first replica signs with the key root v2 lists after \(switched.map { "\($0) s" } ?? "more than 10 s")")
        #expect(try await downloader.model(named: "flowers").version == 2, "the device keeps updating after the rotation")
    }
}

extension ReplicaCoherenceEndToEndTests {
    /// Each replica counts the requests it answered and adds them to the shared catalog: the
    /// stats are the sum over replicas.
    @Test func usageCountedOnEveryReplicaAddsUp() async throws {
        let s3 = try TestS3.settings()
        let database = try await TestPostgres.freshDatabase()
        let arguments = ["--database", database, "--blobs", s3.freshURL()]
        let scratch = try Scratch()
        let first = try await ServerProcess(
            storage: scratch.url.appendingPathComponent("first"), arguments: arguments, environment: s3.environment)
        let second = try await ServerProcess(
            storage: scratch.url.appendingPathComponent("second"), arguments: arguments, environment: s3.environment)
        try await Command.depot(["models", "create", "flowers"], environment: first.environment).succeeded()
        try await Command.depot(["upload", "flowers", Binaries.fixture("float_classifier"), "--publish"], environment: first.environment)
            .succeeded()
        let key = try await Command.depot(["keys", "create", "--app", "--json"], environment: first.environment).decode(
            CreatedAccessKey.self
        )
        .secret
        for (replica, devices) in [(first, 0..<5), (second, 5..<12)] {
            for device in devices {
                _ = try await Command.curl([
                    "-o", "/dev/null", "-H", "Authorization: Bearer \(key)", "-H", "Depot-Installation-ID: device-\(device)",
                    "\(replica.url.absoluteString)/v1/models/flowers/manifest",
                ])
            }
        }
        // A replica writes what it counted on shutdown at the latest
        #expect(try await first.stop(signal: SIGTERM) == 0)
        #expect(try await second.stop(signal: SIGTERM) == 0)
        await #expect(try TestPostgres.query(database, "SELECT sum(count) FROM usage WHERE kind = 'manifest'") == "12")
        await #expect(try TestPostgres.query(database, "SELECT count(*) FROM arm_installation") == "12")
    }
}
