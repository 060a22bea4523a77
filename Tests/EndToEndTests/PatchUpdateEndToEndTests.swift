import Crypto
import Foundation
import ModelDepot
import ModelDepotServer
import ModelDepotShared
import TestSupport
import Testing

/// Updates by patch through a real `depot serve` that makes its patches after a publish: the
/// device downloads the patch instead of the file (the server's byte counter says how much went
/// out), applies it to the version it holds, and installs the same verified bytes a full
/// download would give; any patch that is bad, or makes other bytes, ends in a full download.
@Suite struct PatchUpdateEndToEndTests {
    static let served = "depot_blob_bytes_served_total"

    /// Publishes `path` as the next version of `flowers` and waits until the server made its
    /// `count` patches.
    @discardableResult
    static func publish(_ path: String, on server: ServerProcess, patches count: Int = 1) async throws -> (ModelVersion, [VersionPatch]) {
        let version = try await Command.depot(["upload", "flowers", path, "--publish", "--json"], environment: server.environment).decode(
            ModelVersion.self)
        let list = { () async throws in
            try await Command.depot(["versions", "flowers", "\(version.version)", "--patches", "--json"], environment: server.environment)
                .decode(VersionPatchList.self).patches
        }
        #expect(try await eventually { try await list().count >= count }, "the server made the patches of v\(version.version)")
        return await (version, try list())
    }

    /// The events a downloader sent until it installed a version (or failed).
    static func events(of downloader: ModelDownloader, during body: () async throws -> Void) async throws -> [ModelDownloadEvent] {
        let stream = await downloader.events()
        try await body()
        var seen: [ModelDownloadEvent] = []
        for await event in stream {
            seen.append(event)
            if [.installed, .failed].contains(event.kind) { break }
        }
        return seen
    }

    static func downloaded(_ events: [ModelDownloadEvent]) -> (patched: Int, fetched: Int, saved: Int)? {
        for event in events where event.kind == .downloaded {
            if let patched = event.patched, let fetched = event.fetched, let saved = event.saved { return (patched, fetched, saved) }
        }
        return nil
    }

    enum Store: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case files, s3
        var testDescription: String { rawValue }
    }

    @Test(arguments: Store.allCases)
    func anUpdateDownloadsThePatchAndInstallsTheSignedFile(_ store: Store) async throws {
        let s3 = store == .s3 ? try TestS3.settings() : nil
        let published = try await PublishedModel(
            arguments: ["--patch-from", "3"] + (s3.map { ["--blobs", $0.freshURL()] } ?? []),
            environment: s3?.environment ?? [:])
        let downloader = try published.downloader()
        #expect(try await downloader.model(named: "flowers").version == 1)
        let (v2, patches) = try await Self.publish(Binaries.fixture("float_classifier_labels"), on: published.server)
        let patch = try #require(patches.first)
        #expect(patch.offered && patch.fromVersion == 1 && patch.size < v2.size)

        let before = try await published.server.metric(Self.served)
        var model: VerifiedModel?
        let events = try await Self.events(of: downloader) { model = try await downloader.model(named: "flowers") }
        #expect(model?.version == 2 && model?.sha256 == v2.sha256)
        #expect(
            try Data(contentsOf: try #require(model).fileURL)
                == Data(contentsOf: URL(fileURLWithPath: Binaries.fixture("float_classifier_labels"))))
        await #expect(try published.server.metric(Self.served) - before == patch.size, "only the patch went out")
        #expect(Self.downloaded(events)! == (1, patch.size, v2.size - patch.size))
        #expect(!FileManager.default.fileExists(atPath: published.cache.appendingPathComponent("partial/\(patch.sha256!).part").path))
    }

    @Test func aDamagedPatchIsRefusedByItsDigestAndTheFileDownloadedWhole() async throws {
        let published = try await PublishedModel(arguments: ["--patch-from", "3"])
        try await AttackerProxy.running(in: published.server.url) { proxy in
            let downloader = try published.downloader { $0.serverURL = proxy.url }
            #expect(try await downloader.model(named: "flowers").version == 1)
            let (v2, patches) = try await Self.publish(Binaries.fixture("float_classifier_labels"), on: published.server)
            let patch = try #require(patches.first?.sha256)
            let real = try await proxy.forward("/v1/blobs/sha256/\(patch)", headers: ["Authorization": "Bearer \(published.appKey)"]).body
            var damaged = real
            damaged[damaged.count / 2] ^= 0xFF
            proxy.take("/v1/blobs/sha256/\(patch)", .response(status: .ok, headers: [:], body: damaged))

            var model: VerifiedModel?
            let events = try await Self.events(of: downloader) { model = try await downloader.model(named: "flowers") }
            #expect(model?.version == 2 && model?.sha256 == v2.sha256)
            #expect(Self.downloaded(events)! == (0, damaged.count + v2.size, 0), "the bad patch's bytes, then the whole file")
        }
    }

    @Test func aSignedPatchThatMakesOtherBytesEndsInAFullDownload() async throws {
        let published = try await PublishedModel(arguments: ["--patch-from", "3"])
        try await AttackerProxy.running(in: published.server.url) { proxy in
            let downloader = try published.downloader { $0.serverURL = proxy.url }
            let v1 = try await downloader.model(named: "flowers")
            let (v2, _) = try await Self.publish(Binaries.fixture("float_classifier_labels"), on: published.server)
            // A well-formed patch that inserts v2's length of other bytes, listed in v2's manifest
            // by someone holding the online key: its own digest checks out, its result's does not.
            let other = [UInt8](repeating: 7, count: v2.size)
            let streams = [Patch.encodedStep(added: 0, inserted: other.count, seek: 0), [], other].map {
                $0.withUnsafeBufferPointer { Deflater.compress($0) }
            }
            let forged =
                Patch.Header(
                    oldSize: v1.manifest.size, newSize: v2.size, steps: 1, controlsLength: streams[0].count,
                    addedLength: streams[1].count, insertedLength: streams[2].count
                ).encoded + streams.joined()
            let digest = SHA256.hash(data: forged).hex
            proxy.take("/v1/blobs/sha256/\(digest)", .response(status: .ok, headers: [:], body: Data(forged)))
            let real = try await proxy.forward(
                "/v1/models/flowers/manifest",
                headers: [
                    "Authorization": "Bearer \(published.appKey)", "Depot-Installation-ID": downloader.installationID,
                ]
            ).body
            let stolen = try published.stolenKey(thatSigned: real)
            var manifest = try manifestPayload(real)
            manifest.patches = [.init(from: v1.sha256, sha256: digest, size: forged.count, downloadURL: "/v1/blobs/sha256/\(digest)")]
            proxy.take(
                "/v1/models/flowers/manifest",
                .response(
                    status: .ok, headers: ["Content-Type": "application/json"],
                    body: try SignedEnvelope(signing: manifest, with: [stolen]).encoded()))

            var model: VerifiedModel?
            let events = try await Self.events(of: downloader) { model = try await downloader.model(named: "flowers") }
            #expect(model?.version == 2 && model?.sha256 == v2.sha256)
            #expect(try SHA256.digest(ofFileAt: try #require(model).fileURL.path).hex == v2.sha256)
            #expect(Self.downloaded(events)! == (0, forged.count + v2.size, 0))
        }
    }

    @Test func aPatchThatFailsToApplyOnTheDeviceForAnyReasonEndsInAFullDownload() async throws {
        let published = try await PublishedModel(arguments: ["--patch-from", "3"])
        let downloader = try published.downloader()
        #expect(try await downloader.model(named: "flowers").version == 1)
        let (v2, patches) = try await Self.publish(Binaries.fixture("float_classifier_labels"), on: published.server)
        let patch = try #require(patches.first)
        // The patch is sound, but the device cannot write what it makes (a directory stands where
        // the result goes): file_unreadable, which would fail every later attempt the same way.
        let result = published.cache.appendingPathComponent("partial/\(v2.sha256).part.patched")
        try FileManager.default.createDirectory(at: result, withIntermediateDirectories: true)

        var model: VerifiedModel?
        let events = try await Self.events(of: downloader) { model = try await downloader.model(named: "flowers") }
        #expect(model?.version == 2 && model?.sha256 == v2.sha256)
        #expect(Self.downloaded(events)! == (0, patch.size + v2.size, 0), "the patch's bytes, then the whole file")
    }

    @Test func anInterruptedPatchDownloadResumesWhereItStopped() async throws {
        let published = try await PublishedModel(arguments: ["--patch-from", "3"])
        let transport = DownloadRecoveryEndToEndTests.HookedTransport()
        let downloader = try published.downloader {
            $0.transport = transport
            $0.downloadChunkSize = 64
            $0.retryDelay = .milliseconds(1)
        }
        #expect(try await downloader.model(named: "flowers").version == 1)
        let (v2, patches) = try await Self.publish(Binaries.fixture("float_classifier_labels"), on: published.server)
        let patch = try #require(patches.first)
        #expect(patch.size > 64, "the patch takes more than one range")

        let before = try await published.server.metric(Self.served)
        transport.passingRangesBeforeCut = 1
        let error = await #expect(throws: DepotError.self) { try await downloader.model(named: "flowers") }
        #expect(error?.code == .unavailable)
        let partial = published.cache.appendingPathComponent("partial/\(patch.sha256!).part")
        #expect(
            (try FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? NSNumber)?.intValue == 64,
            "the first range stays for the next attempt")

        transport.passingRangesBeforeCut = nil
        let model = try await downloader.model(named: "flowers")
        #expect(model.version == 2 && model.sha256 == v2.sha256)
        await #expect(try published.server.metric(Self.served) - before == patch.size, "each byte of the patch went out once")
    }

    @Test func depotDiffShowsThePatchAnUpdateWouldCost() async throws {
        struct Result: Decodable { let oldSize: Int, newSize: Int, patchSize: Int, share: Double, offered: Bool, alignedTensors: Int }
        let scratch = try Scratch()
        let (old, new) = (Binaries.fixture("float_classifier"), Binaries.fixture("float_classifier_labels"))
        let result = try await Command.depot(["diff", old, new, "--out", scratch.path("patch"), "--json"], environment: [:]).decode(
            Result.self)
        let written = try Data(contentsOf: scratch.url.appendingPathComponent("patch"))
        #expect(result.patchSize == written.count && result.oldSize == 992 && result.newSize == 1127 && result.offered)
        #expect(abs(result.share - Double(written.count) / 1127) < 1e-9)
        #expect(result.alignedTensors == 0, "labels added, no weight changed")
        let text = try await Command.depot(["diff", old, new], environment: [:])
        #expect(
            text.status == 0 && text.text.contains("\(written.count) bytes") && text.text.contains("of the new file's 1127")
                && !text.text.contains("changed tensor"), "\(text.text)"
        )
        let missing = try await Command.depot(["diff", scratch.path("absent.tflite"), new], environment: [:])
        #expect(missing.status == 1 && missing.error.contains("absent.tflite"), "\(missing.error)")
    }

    /// A fine-tuned model (every weight moved a little, and elsewhere in the file): the server's
    /// patch adds each weight to its old self, as `depot diff` says, and the device installs the
    /// signed file from it.
    @Test func aFineTunedModelUpdatesByAPatchOfItsWeights() async throws {
        struct Result: Decodable { let patchSize: Int, offered: Bool, alignedTensors: Int }
        let (old, new) = (Binaries.fixture("delta/base"), Binaries.fixture("delta/finetuned"))
        let published = try await PublishedModel(["delta/base"], arguments: ["--patch-from", "1"])
        let downloader = try published.downloader()
        #expect(try await downloader.model(named: "flowers").version == 1)
        let (v2, patches) = try await Self.publish(new, on: published.server)
        let patch = try #require(patches.first)
        let diff = try await Command.depot(["diff", old, new, "--json"], environment: [:]).decode(Result.self)
        #expect(diff.alignedTensors == 4 && diff.offered)
        #expect(patch.offered && patch.size == diff.patchSize, "the server's patch is depot diff's: \(patch.size), \(diff.patchSize)")
        let text = try await Command.depot(["diff", old, new], environment: [:])
        #expect(text.text.contains("4 changed tensors added to their old selves"), "\(text.text)")

        let before = try await published.server.metric(Self.served)
        let model = try await downloader.model(named: "flowers")
        #expect(model.version == 2 && model.sha256 == v2.sha256)
        #expect(try Data(contentsOf: model.fileURL) == Data(contentsOf: URL(fileURLWithPath: new)))
        await #expect(try published.server.metric(Self.served) - before == patch.size, "only the patch went out")
    }

    /// `--stop-over-limit` stops as the server does: a patch under the limit is made whole, one
    /// that cannot come under it stops with the size it had reached, less than the whole patch.
    @Test func depotDiffStopsOverTheLimitAsTheServerDoes() async throws {
        struct Result: Decodable { let newSize: Int, patchSize: Int, offered: Bool, stopped: Bool, alignedTensors: Int }
        let scratch = try Scratch()
        var generator = SystemRandomNumberGenerator()
        let oldBytes = (0..<600_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let newBytes = renewedBytes(from: oldBytes, count: 600_000, using: &generator)
        let (old, new) = (scratch.path("old.bin"), scratch.path("new.bin"))
        try Data(oldBytes).write(to: URL(fileURLWithPath: old))
        try Data(newBytes).write(to: URL(fileURLWithPath: new))
        let whole = try await Command.depot(["diff", old, new, "--json"], environment: [:]).decode(Result.self)
        let stopped = try await Command.depot(["diff", old, new, "--stop-over-limit", "--json"], environment: [:]).decode(Result.self)
        #expect(!whole.stopped && !whole.offered && stopped.stopped && !stopped.offered)
        #expect(whole.alignedTensors == 0, "not models: nothing to line up")
        #expect(stopped.patchSize > newBytes.count * 8 / 10 && stopped.patchSize < whole.patchSize, "\(stopped) \(whole)")
        let small = (Binaries.fixture("float_classifier"), Binaries.fixture("float_classifier_labels"))
        let kept = try await Command.depot(["diff", small.0, small.1, "--stop-over-limit", "--json"], environment: [:]).decode(Result.self)
        #expect(kept.offered && !kept.stopped)
        let both = try await Command.depot(["diff", old, new, "--stop-over-limit", "--out", scratch.path("p")], environment: [:])
        #expect(both.status == 1 && both.error.contains("--out writes the whole patch"), "\(both.error)")
    }

    @Test func aDeviceTooFarBehindForAnyPatchDownloadsTheFile() async throws {
        let published = try await PublishedModel(arguments: ["--patch-from", "1"])
        let downloader = try published.downloader()
        #expect(try await downloader.model(named: "flowers").version == 1)
        try await Self.publish(Binaries.fixture("int8_conv"), on: published.server)
        let (v3, patches) = try await Self.publish(Binaries.fixture("float_classifier_labels"), on: published.server)
        #expect(patches.map(\.fromVersion) == [2], "only from the version before")

        let before = try await published.server.metric(Self.served)
        var model: VerifiedModel?
        let events = try await Self.events(of: downloader) { model = try await downloader.model(named: "flowers") }
        #expect(model?.version == 3)
        await #expect(try published.server.metric(Self.served) - before == v3.size)
        #expect(Self.downloaded(events)! == (0, v3.size, 0))
    }

    @Test func aCompanionFileIsUpdatedByPatch() async throws {
        let published = try await PublishedModel([], arguments: ["--patch-from", "3"])
        let export = { (changed: Int?) throws -> String in
            let directory = published.scratch.url.appendingPathComponent("export-\(changed ?? -1)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let automl = CompanionFilesEndToEndTests.automl
            for name in ["model.tflite", "tflite_metadata.json"] {
                try FileManager.default.copyItem(at: automl.appendingPathComponent(name), to: directory.appendingPathComponent(name))
            }
            let labels = (0..<500).map { (index: Int) in index == changed ? "a renamed class" : "class \(index)" }.joined(separator: "\n")
            try Data(labels.utf8).write(to: directory.appendingPathComponent("dict.txt"))
            return directory.path
        }
        _ = try await Self.publish(try export(nil), on: published.server, patches: 0)
        let downloader = try published.downloader()
        let first = try await downloader.model(named: "flowers")
        #expect(first.labels.count == 500)
        let (v2, patches) = try await Self.publish(try export(250), on: published.server, patches: 1)
        let patch = try #require(patches.first)
        #expect(patches.count == 1 && patch.file == "labels" && patch.offered, "the model and settings did not change")
        let labels = try #require(v2.files.first { $0.name == "labels" })

        let before = try await published.server.metric(Self.served)
        var model: VerifiedModel?
        let events = try await Self.events(of: downloader) { model = try await downloader.model(named: "flowers") }
        #expect(model?.version == 2 && model?.labels[250] == "a renamed class" && model?.labels.count == 500)
        await #expect(try published.server.metric(Self.served) - before == patch.size, "the unchanged model and settings were copied")
        let unchanged = v2.size + v2.files.filter { $0.name != "labels" }.map(\.size).reduce(0, +)
        #expect(Self.downloaded(events)! == (1, patch.size, unchanged + labels.size - patch.size))
    }
}
