import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// `depot serve` on a storage directory that is a 6 MiB file system of its own (a tmpfs mount):
/// an upload larger than the space left gets `507`, stores nothing, and the server goes on
/// answering devices and taking uploads that fit.
@Suite struct DiskFullEndToEndTests {
    /// A tmpfs of `megabytes` mounted on a new folder, unmounted when the value goes away.
    final class SmallFileSystem {
        let scratch: Scratch
        let mountPoint: URL

        init(megabytes: Int) async throws {
            scratch = try Scratch()
            mountPoint = scratch.url.appendingPathComponent("storage")
            try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
            let mounted = try await Program.run("mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", mountPoint.path])
            guard mounted.status == 0 else { throw E2EFailure("mount -t tmpfs failed (the tests run as root): \(mounted.error)") }
        }

        deinit { umount2(mountPoint.path, Int32(MNT_DETACH)) }
    }

    @Test func anUploadThatDoesNotFitIs507AndStoresNothing() async throws {
        let disk = try await SmallFileSystem(megabytes: 6)
        let server = try await ServerProcess(storage: disk.mountPoint)
        try await Command.depot(["models", "create", "flowers"], environment: server.environment).succeeded()
        let v1 = try await Command.depot(
            ["upload", "flowers", Binaries.fixture("float_classifier"), "--publish", "--json"],
            environment: server.environment
        ).decode(ModelVersion.self)
        let appKey = try await Command.depot(["keys", "create", "--app", "--json"], environment: server.environment).decode(
            CreatedAccessKey.self
        )
        .secret
        try CrashSafetyTests.largeModel(disk.scratch.path("large.tflite"), megabytes: 8, seed: 3)

        let refused = try await Command.depot(
            ["upload", "flowers", disk.scratch.path("large.tflite"), "--publish"], environment: server.environment)
        #expect(refused.status == 2, "\(refused.error)")
        #expect(refused.error.contains("storage is full"), "\(refused.error)")
        #expect(!refused.error.contains(disk.mountPoint.path), "no path in the answer")

        let versions = try await Command.depot(["versions", "flowers", "--json"], environment: server.environment).text
        #expect(versions.components(separatedBy: "\"sha256\"").count == 2, "only v1: \(versions)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.mountPoint.appendingPathComponent("tmp").path).isEmpty)
        let manifest = try await Command.curl([
            "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer \(appKey)",
            server.url.appendingPathComponent("v1/models/flowers/manifest").absoluteString,
        ])
        #expect(manifest.text == "200", "devices are still answered")
        await #expect(
            try server.metric(#"depot_http_requests_total{route="/v1/admin/models/{name}/versions",method="POST",status="507"}"#) == 1)

        let fits = try await Command.depot(
            ["upload", "flowers", Binaries.fixture("float_classifier_labels"), "--json"], environment: server.environment)
        #expect(fits.status == 0, "space freed by the refused upload is used again: \(fits.error)")
        #expect(try fits.decode(ModelVersion.self).version == v1.version + 1)
    }
}
