import Crypto
import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// SIGKILL in the middle of uploads, again and again: after every restart no half version is
/// visible, no temporary file remains, and every version's blob still hashes to its SHA-256.
@Suite struct CrashSafetyTests {
    /// A valid model of about `megabytes` MB: a fixture with random bytes appended (as a zip would be).
    static func largeModel(_ path: String, megabytes: Int, seed: UInt8) throws {
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: Binaries.fixture("float_classifier"))))
        var generator = SystemRandomNumberGenerator()
        bytes += (0..<(megabytes << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes.append(seed)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test func killedServerNeverShowsAHalfVersion() async throws {
        let scratch = try Scratch()
        let storage = scratch.url.appendingPathComponent("storage")
        try Self.largeModel(scratch.path("large.tflite"), megabytes: 24, seed: 0)
        var completed = 0
        for round in 0..<5 {
            let server = try await ServerProcess(storage: storage)
            if round == 0 { try await Command.depot(["models", "create", "flowers"], environment: server.environment).succeeded() }
            try Self.largeModel(scratch.path("small-\(round).tflite"), megabytes: 1, seed: UInt8(round + 1))
            let small = try await Command.depot(
                ["upload", "flowers", scratch.path("small-\(round).tflite")], environment: server.environment)
            #expect(small.status == 0, "\(small.error)")
            completed += 1

            // A slow upload of the large model; kill the server once part of it has arrived.
            let upload = try await RunningProgram.start(
                "curl",
                [
                    "-sS", "--limit-rate", "4M", "-X", "POST", "-H", "Authorization: Bearer \(ServerProcess.adminToken)",
                    "--data-binary", "@" + scratch.path("large.tflite"), "\(server.url.absoluteString)/v1/admin/models/flowers/versions",
                ])
            let threshold = (round + 1) << 21
            let arrived = await eventually(within: 30) {
                let tmp = storage.appendingPathComponent("tmp").path
                return ((try? FileManager.default.contentsOfDirectory(atPath: tmp)) ?? []).contains { name in
                    ((try? FileManager.default.attributesOfItem(atPath: tmp + "/" + name)[.size]) as? NSNumber)?.intValue ?? 0 >= threshold
                }
            }
            #expect(arrived, "round \(round): the upload never reached \(threshold) bytes")
            try await server.stop(signal: SIGKILL)
            try await upload.exit()

            let restarted = try await ServerProcess(storage: storage)
            #expect(try FileManager.default.contentsOfDirectory(atPath: storage.appendingPathComponent("tmp").path).isEmpty)
            let versions = try await Command.depot(["versions", "flowers", "--json"], environment: restarted.environment).decode(
                ModelVersionList.self)
            #expect(versions.versions.count == completed, "round \(round)")
            for version in versions.versions {
                let blob = try await Command.curl([
                    "-H", "Authorization: Bearer \(ServerProcess.adminToken)",
                    "\(restarted.url.absoluteString)/v1/blobs/sha256/\(version.sha256)",
                ])
                #expect(blob.output.count == version.size)
                #expect(SHA256.hash(data: blob.output).hex == version.sha256, "round \(round), version \(version.version)")
            }
            let blobs =
                FileManager.default.enumerator(atPath: storage.appendingPathComponent("blobs/sha256").path)?
                .allObjects.compactMap { $0 as? String }.filter { $0.count == 67 } ?? []
            #expect(blobs.count == completed, "only referenced blobs remain: \(blobs)")
            try await restarted.stop(signal: SIGTERM)
        }
    }

    @Test func sigtermLetsAnUploadInFlightFinish() async throws {
        let scratch = try Scratch()
        let storage = scratch.url.appendingPathComponent("storage")
        try Self.largeModel(scratch.path("large.tflite"), megabytes: 8, seed: 9)
        let server = try await ServerProcess(storage: storage)
        try await Command.depot(["models", "create", "flowers"], environment: server.environment).succeeded()
        // About eight seconds in flight, so that a look at tmp/ comes while it is, also when a busy
        // machine holds the test's threads for seconds (at 2 MB/s a full run once missed it).
        let upload = try await RunningProgram.start(
            "curl",
            [
                "-sS", "--fail", "--limit-rate", "1M", "-X", "POST", "-H", "Authorization: Bearer \(ServerProcess.adminToken)",
                "-o", scratch.path("response.json"), "--data-binary", "@" + scratch.path("large.tflite"),
                "\(server.url.absoluteString)/v1/admin/models/flowers/versions",
            ])
        let tmp = storage.appendingPathComponent("tmp").path
        await #expect(eventually { !((try? FileManager.default.contentsOfDirectory(atPath: tmp)) ?? []).isEmpty })

        #expect(try await server.stop(signal: SIGTERM) == 0)
        #expect(try await upload.exit() == 0)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let version = try decoder.decode(ModelVersion.self, from: Data(contentsOf: URL(fileURLWithPath: scratch.path("response.json"))))
        #expect(version.version == 1)

        let restarted = try await ServerProcess(storage: storage)
        let versions = try await Command.depot(["versions", "flowers", "--json"], environment: restarted.environment).decode(
            ModelVersionList.self)
        #expect(versions.versions.map(\.sha256) == [version.sha256])
    }
}
