import Foundation
import ModelDepot
import ModelDepotShared
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Three `depot serve` replicas sharing PostgreSQL and an S3 store, behind nginx: one service
/// whichever replica a request reaches.
@Suite struct ThreeReplicasEndToEndTests {
    struct Service {
        let scratch: Scratch
        let replicas: [ServerProcess]
        let balancer: Balancer
        let s3: TestS3.Settings
        let prefix: String
    }

    static func start() async throws -> Service {
        let s3 = try TestS3.settings()
        let blobs = s3.freshURL()
        let arguments = ["--database", try await TestPostgres.freshDatabase(), "--blobs", blobs]
        let scratch = try Scratch()
        var replicas: [ServerProcess] = []
        for number in 1...3 {
            replicas.append(
                try await ServerProcess(
                    storage: scratch.url.appendingPathComponent("replica-\(number)"), arguments: arguments, environment: s3.environment))
        }
        return Service(
            scratch: scratch, replicas: replicas, balancer: try await Balancer(replicas: replicas, in: scratch), s3: s3,
            prefix: String(blobs.dropFirst("s3://\(s3.bucket)/".count)))
    }

    /// The blob objects in the store, by a plain S3 listing (botocore).
    static func storedBlobs(_ service: Service) async throws -> [String] {
        let script = """
            import boto3, sys
            s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1", aws_access_key_id=sys.argv[2], aws_secret_access_key=sys.argv[3])
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=sys.argv[4], Prefix=sys.argv[5]):
                for item in page.get("Contents", []): print(item["Key"].rsplit("/", 1)[1])
            """
        let listed = try await Program.run(
            "python3",
            [
                "-c", script, service.s3.endpoint, service.s3.accessKeyID, service.s3.secretAccessKey,
                service.s3.bucket, service.prefix + "/blobs/sha256/",
            ])
        guard listed.status == 0 else { throw E2EFailure("listing the store failed: \(listed.error)") }
        return listed.text.split(separator: "\n").map(String.init).sorted()
    }

    @Test func oneServiceWhicheverReplicaARequestReaches() async throws {
        let service = try await Self.start()
        let (one, two, three) = (service.replicas[0].environment, service.replicas[1].environment, service.replicas[2].environment)
        let root = try await service.replicas[0].initializeRoot(keyFile: service.scratch.path("root.key"))
        try await Command.depot(["models", "create", "flowers"], environment: one).succeeded()

        // Upload through one replica, publish through another, change the rollout through the third
        let uploaded = try await Command.depot(["upload", "flowers", Binaries.fixture("float_classifier"), "--json"], environment: one)
        #expect(uploaded.status == 0, "\(uploaded.error)")
        await #expect(try Command.depot(["publish", "flowers", "1"], environment: two).status == 0)
        let key = try await Command.depot(["keys", "create", "--app", "--json"], environment: three).decode(CreatedAccessKey.self).secret
        let downloader = try ModelDownloader(
            configuration: ModelDownloaderConfiguration(
                serverURL: service.balancer.url, appKey: key, trustedRoot: .publicKey(root.publicKey),
                cacheDirectory: service.scratch.url.appendingPathComponent("cache")))
        #expect(try await downloader.model(named: "flowers").version == 1, "the SDK downloads through the balancer")

        // The same content through two replicas at once is one blob
        let concurrent = try await withThrowingTaskGroup(of: ModelVersion.self) { group in
            // (through nginx, which drops the trailer the CLI sends its digest in: the CLI sends
            // again with the digest as a header)
            for environment in [service.balancer.environment, two] {
                group.addTask {
                    try await Command.depot(
                        ["upload", "flowers", Binaries.fixture("int8_conv"), "--publish", "--json"], environment: environment
                    ).decode(ModelVersion.self)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(concurrent.map(\.version)) == [2, 3])
        #expect(concurrent[0].sha256 == concurrent[1].sha256)
        await #expect(try Self.storedBlobs(service) == [try uploaded.decode(ModelVersion.self).sha256, concurrent[0].sha256].sorted())

        // A rollout change through the third replica is served by every replica within a second
        let set = try await Command.depot(["rollout", "set", "flowers", "--default", "1"], environment: three)
        #expect(set.status == 0, "\(set.error)")
        let started = Date()
        for replica in service.replicas {
            let served = try await eventually(within: 10) {
                try await Command.curl(["-H", "Authorization: Bearer \(key)", "\(replica.url.absoluteString)/v1/models/flowers/manifest"])
                    .manifest().version == 1
            }
            #expect(served)
        }
        #expect(Date().timeIntervalSince(started) < 1, "every replica served the change within \(Date().timeIntervalSince(started)) s")

        // A manifest key rotation with three replicas running leaves devices updating
        let rotated = try await Command.depot(["keys", "rotate", "--root-key", root.file], environment: service.balancer.environment)
        #expect(rotated.status == 0, "\(rotated.error)")
        await #expect(
            try Command.depot(["rollout", "set", "flowers", "--default", "3"], environment: service.balancer.environment).status == 0)
        for replica in service.replicas {
            let served = try await eventually(within: 10) {
                try await Command.curl(["-H", "Authorization: Bearer \(key)", "\(replica.url.absoluteString)/v1/models/flowers/manifest"])
                    .manifest().version == 3
            }
            #expect(served)
        }
        var devices = 0
        for _ in 0..<6 where try await downloader.model(named: "flowers").version == 3 { devices += 1 }
        #expect(devices == 6, "every check, whichever replica answered, verified the manifest signed by the new key")
    }

    /// URLSession, but after the first range the replica that served it is SIGKILLed.
    final class KillServingReplica: ModelTransport, @unchecked Sendable {
        // @unchecked: `killed` is only touched by the downloader's actor, one call at a time.
        let real = URLSessionTransport()
        let replicas: [ServerProcess]
        var killed: ServerProcess?

        init(replicas: [ServerProcess]) { self.replicas = replicas }

        func data(for request: URLRequest, limits: TransferLimits) async throws -> (Data, HTTPURLResponse) {
            try await real.data(for: request, limits: limits)
        }

        func download(_ request: URLRequest, limits: TransferLimits) async throws -> (URL, HTTPURLResponse) {
            let result = try await real.download(request, limits: limits)
            guard killed == nil else { return result }
            for serving in replicas where try await serving.metric("depot_blob_bytes_served_total") > 0 {
                try await serving.stop(signal: SIGKILL)
                killed = serving
                break
            }
            return result
        }
    }

    @Test func aDownloadWhoseReplicaIsKilledCompletesFromAnother() async throws {
        let service = try await Self.start()
        let admin = service.replicas[0].environment
        let root = try await service.replicas[0].initializeRoot(keyFile: service.scratch.path("root.key"))
        let version = try await service.replicas[0].publishLargeModel(megabytes: 2, seed: 5, in: service.scratch)
        let key = try await Command.depot(["keys", "create", "--app", "--json"], environment: admin).decode(CreatedAccessKey.self).secret
        let transport = KillServingReplica(replicas: service.replicas)
        var configuration = ModelDownloaderConfiguration(
            serverURL: service.balancer.url, appKey: key, trustedRoot: .publicKey(root.publicKey),
            cacheDirectory: service.scratch.url.appendingPathComponent("cache"), transport: transport)
        configuration.downloadChunkSize = 256 * 1024
        let model = try await ModelDownloader(configuration: configuration).model(named: "flowers")
        #expect(model.sha256 == version.sha256)
        let killed = try #require(transport.killed, "a replica served the first range")
        let survivors = service.replicas.filter { $0 !== killed }
        var servedBySurvivors = 0
        for survivor in survivors { servedBySurvivors += try await survivor.metric("depot_blob_bytes_served_total") }
        #expect(servedBySurvivors >= version.size - 256 * 1024, "the other replicas served the rest")
    }
}
