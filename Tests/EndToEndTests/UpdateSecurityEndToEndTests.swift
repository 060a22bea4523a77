import Crypto
import Foundation
import Hummingbird
import ModelDepot
import ModelDepotShared
import TestSupport
import Testing

/// The attack suite: a device with v1 of `flowers` installed talks to a real `depot serve`
/// through an attacker's proxy on 127.0.0.1. Every attack must be refused with its own error
/// while v1 (or the current version) stays in use; the happy paths must still work.
@Suite struct UpdateSecurityEndToEndTests {
    /// A device with v1 installed through the proxy.
    struct Device {
        let published: PublishedModel
        let proxy: AttackerProxy
        /// The device's wall clock, which a test moves (the server keeps the real time).
        let clock: MovableClock
        let downloader: ModelDownloader
        var manifestPath: String { "/v1/models/flowers/manifest" }
        var environment: [String: String] { published.server.environment }

        /// The manifest the real server gives this device now (what an attacker records).
        func recordManifest(_ model: String = "flowers") async throws -> (body: Data, etag: String) {
            let answer = try await proxy.forward(
                "/v1/models/\(model)/manifest",
                headers: [
                    "Authorization": "Bearer \(published.appKey)", "Depot-Installation-ID": downloader.installationID,
                ])
            return (answer.body, answer.headers.first { $0.key.lowercased() == "etag" }?.value ?? "")
        }

        /// Uploads and publishes a fixture as the next version; returns it.
        func publish(_ fixture: String, to model: String = "flowers") async throws -> ModelVersion {
            try await Command.depot(["upload", model, Binaries.fixture(fixture), "--publish", "--json"], environment: environment).decode(
                ModelVersion.self)
        }

        /// The online key that signed `manifest`, as an attacker who stole it from the server has it.
        func stolenKey(thatSigned manifest: Data) throws -> Curve25519.Signing.PrivateKey {
            try published.stolenKey(thatSigned: manifest)
        }

        /// Another downloader on the same cache and proxy, configured by `change`.
        func downloader(_ change: (inout ModelDownloaderConfiguration) -> Void) throws -> ModelDownloader {
            let clock = clock
            return try published.downloader {
                $0.serverURL = proxy.url
                $0.clock = { clock.now }
                $0.retryDelay = .milliseconds(5)
                change(&$0)
            }
        }

        /// Serves `body` as the manifest from now on.
        func serveManifest(_ body: Data, headers: [String: String] = [:]) {
            proxy.take(
                manifestPath, .response(status: .ok, headers: ["Content-Type": "application/json"].merging(headers) { $1 }, body: body))
        }
    }

    func withDevice(_ body: (Device) async throws -> Void) async throws {
        let published = try await PublishedModel()
        defer { withExtendedLifetime(published) {} }
        try await AttackerProxy.running(in: published.server.url) { proxy in
            let clock = MovableClock()
            let downloader = try published.downloader {
                $0.serverURL = proxy.url
                $0.clock = { clock.now }
                $0.retryDelay = .milliseconds(5)
            }
            #expect(try await downloader.model(named: "flowers").version == 1)
            try await body(Device(published: published, proxy: proxy, clock: clock, downloader: downloader))
        }
    }

    /// Checks that the next update is refused with `code` and that `version` stays in use, its
    /// file intact.
    func expectRefused(
        _ device: Device, _ code: DepotError.Code, keeping version: Int, saying text: String? = nil,
        using downloader: ModelDownloader? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        do {
            let model = try await (downloader ?? device.downloader).model(named: "flowers")
            Issue.record("the attack was not caught: v\(model.version) was accepted", sourceLocation: sourceLocation)
        } catch let error as DepotError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            #expect(error.message.contains("The current model (v\(version)) stays in use."), "\(error)", sourceLocation: sourceLocation)
            if let text { #expect(error.message.contains(text), "\(error)", sourceLocation: sourceLocation) }
        }
        let current = try await device.downloader.model(named: "flowers", policy: .localModel)
        #expect(current.version == version, sourceLocation: sourceLocation)
        #expect(try SHA256.digest(ofFileAt: current.fileURL.path).hex == current.sha256, sourceLocation: sourceLocation)
    }

    /// A manifest envelope with a changed payload, signed by `signers`.
    func forge(_ body: Data, signers: [Curve25519.Signing.PrivateKey], _ change: (inout ModelManifest) -> Void = { _ in }) throws -> Data {
        var manifest = try manifestPayload(body)
        change(&manifest)
        return try SignedEnvelope(signing: manifest, with: signers).encoded()
    }

    @Test func normalUpdateThroughAnHonestPath() async throws {
        try await withDevice { device in
            let v2 = try await device.publish("float_classifier_labels")
            let model = try await device.downloader.model(named: "flowers")
            #expect(model.version == 2 && model.sha256 == v2.sha256)
        }
    }

    @Test func swappedBlobIsRefused() async throws {
        try await withDevice { device in
            let v2 = try await device.publish("float_classifier_labels")
            let arbitrary = Data((0..<v2.size).map { _ in UInt8.random(in: 0...255) })
            device.proxy.take("/v1/blobs/sha256/\(v2.sha256)", .response(status: .ok, headers: [:], body: arbitrary))
            try await expectRefused(device, .digestMismatch, keeping: 1)
        }
    }

    @Test func endlessDataStopsAtTheSignedLength() async throws {
        try await withDevice { device in
            let v2 = try await device.publish("float_classifier_labels")
            // An endless body has no length to announce; a length above the file's is a lie told in the head.
            try await expectCutOff(
                device, blob: v2, answering: "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream",
                refused: .sizeMismatch, saying: "announces no length where \(v2.size) belong")
            try await expectCutOff(
                device, blob: v2, answering: "HTTP/1.1 200 OK\r\nContent-Length: \(1 << 30)",
                refused: .sizeMismatch, saying: "announces \(1 << 30) bytes where \(v2.size) belong")
            #expect(
                !FileManager.default.fileExists(atPath: device.published.cache.appendingPathComponent("partial/\(v2.sha256).part").path))
        }
    }

    @Test func aRangeAnswerForOtherBytesIsRefusedOnItsHeadAndCut() async throws {
        try await withDevice { device in
            let v2 = try await device.publish("float_classifier_labels")
            try await expectCutOff(
                device, blob: v2, answering: "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-\(v2.size * 1000)/\(v2.size)",
                refused: .sizeMismatch, saying: "the answer was refused before its body was read")
        }
    }

    @Test func anEndlessManifestStopsAtTheManifestLimit() async throws {
        try await withDevice { device in
            try await EndlessServer.running(head: "HTTP/1.1 200 OK\r\nContent-Type: application/json") { endless in
                let deceived = try device.downloader { $0.serverURL = endless.url }
                try await expectRefused(
                    device, .metadataTooLarge, keeping: 1, saying: "larger than \(ModelManifest.maximumSize) bytes",
                    using: deceived)
                try await expectConnectionCut(endless, allowing: ModelManifest.maximumSize)
            }
        }
    }

    /// Sends the device for `blob` to an endless server (an origin the app allows, turned
    /// hostile) that answers `head`; expects the refusal and the connection cut.
    func expectCutOff(
        _ device: Device, blob: ModelVersion, answering head: String, refused code: DepotError.Code, saying text: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try await EndlessServer.running(head: head) { endless in
            let path = "/v1/blobs/sha256/\(blob.sha256)"
            device.proxy.take(path, .response(status: .found, headers: ["Location": endless.url.absoluteString + path], body: Data()))
            let allowing = try device.downloader { $0.allowedDownloadOrigins = [endless.url] }
            try await expectRefused(device, code, keeping: 1, saying: text, using: allowing, sourceLocation: sourceLocation)
            try await expectConnectionCut(endless, allowing: blob.size, sourceLocation: sourceLocation)
        }
    }

    /// The endless server's body was delivered and the device closed the connection at once: no
    /// more left the attacker than the device may accept and what the sockets between them hold.
    func expectConnectionCut(_ endless: EndlessServer, allowing limit: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws
    {
        #expect(
            await eventually { endless.cut.load(ordering: .relaxed) }, "the device never closed the connection",
            sourceLocation: sourceLocation)
        let sent = endless.sent.load(ordering: .relaxed)
        let bound = try limit + Self.socketBuffers()
        #expect(
            sent <= bound, "the attacker got \(sent) bytes out; the limit and the sockets' buffers hold \(bound)",
            sourceLocation: sourceLocation)
    }

    /// The most a loopback connection holds in flight: the kernel's largest TCP receive and send
    /// buffers (the last numbers of `tcp_rmem` and `tcp_wmem`), plus 1 MiB for what the device's
    /// process reads ahead.
    static func socketBuffers() throws -> Int {
        try ["tcp_rmem", "tcp_wmem"].reduce(1 << 20) { total, name in
            let text = try String(contentsOfFile: "/proc/sys/net/ipv4/\(name)", encoding: .utf8)
            return total + (try #require(text.split(whereSeparator: \.isWhitespace).last.flatMap { Int($0) }))
        }
    }

    @Test func replayedOlderManifestIsARollback() async throws {
        try await withDevice { device in
            let old = try await device.recordManifest()
            _ = try await device.publish("float_classifier_labels")
            #expect(try await device.downloader.model(named: "flowers").version == 2)
            device.serveManifest(old.body, headers: ["ETag": old.etag])
            try await expectRefused(device, .manifestRollback, keeping: 2, saying: "an old manifest was replayed")
        }
    }

    @Test func frozenManifestIsRefusedAfterItExpires() async throws {
        try await withDevice { device in
            let recorded = try await device.recordManifest()
            device.clock.advance(by: 8 * 24 * 3600)
            device.serveManifest(recorded.body, headers: ["ETag": recorded.etag])
            try await expectRefused(device, .manifestExpired, keeping: 1)
            device.proxy.take(device.manifestPath, .response(status: .notModified, headers: ["ETag": recorded.etag], body: Data()))
            try await expectRefused(device, .manifestExpired, keeping: 1, saying: "unchanged, but it expired")
        }
    }

    @Test func anotherModelsManifestIsAMixAndMatch() async throws {
        try await withDevice { device in
            try await Command.depot(["models", "create", "tulips"], environment: device.environment).succeeded()
            _ = try await device.publish("int8_conv", to: "tulips")
            device.serveManifest(try await device.recordManifest("tulips").body)
            try await expectRefused(device, .manifestMismatch, keeping: 1, saying: "a manifest for 'tulips' when 'flowers' was asked for")
        }
    }

    @Test func manifestsFromUnknownKeysOrChangedAfterSigningAreRefused() async throws {
        try await withDevice { device in
            let v2 = try await device.publish("float_classifier_labels")
            let real = try await device.recordManifest()
            device.serveManifest(try forge(real.body, signers: [Curve25519.Signing.PrivateKey()]) { $0.manifestVersion += 10 })
            try await expectRefused(device, .unknownSigningKey, keeping: 1)

            var envelope = try JSONDecoder().decode(SignedEnvelope.self, from: real.body)
            var payload = try manifestPayload(real.body)
            payload.size = v2.size + 1
            envelope.payload = try SignedJSON.encoder.encode(payload).base64EncodedString()
            device.serveManifest(try envelope.encoded())
            try await expectRefused(device, .invalidSignature, keeping: 1, saying: "the document was changed or forged")
        }
    }

    @Test func duplicatedAndMissingSignaturesAreRefused() async throws {
        try await withDevice { device in
            _ = try await device.publish("float_classifier_labels")
            let real = try await device.recordManifest()
            var envelope = try JSONDecoder().decode(SignedEnvelope.self, from: real.body)
            envelope.signatures += envelope.signatures
            device.serveManifest(try envelope.encoded())
            try await expectRefused(device, .duplicateSignature, keeping: 1)
            envelope.signatures = []
            device.serveManifest(try envelope.encoded())
            try await expectRefused(device, .unsignedManifest, keeping: 1, saying: "carries no signature")
            device.serveManifest(try SignedJSON.encoder.encode(try manifestPayload(real.body)))
            try await expectRefused(device, .unsignedManifest, keeping: 1, saying: "is not a signed envelope")
            device.serveManifest(Data(repeating: 32, count: 65 << 10))
            try await expectRefused(device, .metadataTooLarge, keeping: 1)
        }
    }

    @Test func keyRotationIsFollowedAndTheRevokedKeyIsRefused() async throws {
        try await withDevice { device in
            let before = try await device.recordManifest()
            let stolen = try device.stolenKey(thatSigned: before.body)
            let oldID = PublicSigningKey.keyID(of: stolen.publicKey)
            let rotated = try await Command.depot(
                ["keys", "rotate", "--root-key", device.published.root.file], environment: device.environment)
            #expect(rotated.status == 0, "\(rotated.error)")
            _ = try await device.publish("float_classifier_labels")
            #expect(try await device.downloader.model(named: "flowers").version == 2, "the device follows the new key")
            let stored = try TrustedRoot(first: try Data(contentsOf: device.published.cache.appendingPathComponent("trust/root.json")))
            #expect(stored.document.version == 2)
            #expect(stored.document.revokedKeys.contains(oldID))

            let current = try await device.recordManifest()
            device.serveManifest(try forge(current.body, signers: [stolen]) { $0.manifestVersion += 1 })
            try await expectRefused(device, .revokedSigningKey, keeping: 2)
        }
    }

    @Test func rootRotationIsFollowedFromThePinnedKey() async throws {
        try await withDevice { device in
            let scratch = device.published.scratch
            var previous = device.published.root.file
            for name in ["root2.key", "root3.key"] {
                try await Command.depot(["keys", "root", "generate", "--out", scratch.path(name)], environment: device.environment)
                    .succeeded()
                let rotated = try await Command.depot(
                    ["keys", "rotate", "--root-key", previous, "--new-root-key", scratch.path(name)],
                    environment: device.environment)
                #expect(rotated.status == 0, "\(rotated.error)")
                previous = scratch.path(name)
            }
            let v2 = try await device.publish("float_classifier_labels")
            #expect(try await device.downloader.model(named: "flowers").sha256 == v2.sha256)
            let fresh = try device.published.downloader {
                $0.serverURL = device.proxy.url
                $0.cacheDirectory = scratch.url.appendingPathComponent("fresh-cache")
            }
            #expect(try await fresh.model(named: "flowers").sha256 == v2.sha256, "a new device walks root v1 -> v3 from the pinned key")

            // An app release that pins the newest root key starts from the first document it signed,
            // and keeps the manifest versions the device accepted under the old pin.
            let root3 = try Curve25519.Signing.PrivateKey(
                fileText: String(contentsOfFile: scratch.path("root3.key"), encoding: .utf8), path: "root3")
            let replayed = try await device.recordManifest()
            let repinned = try device.published.downloader {
                $0.serverURL = device.proxy.url
                $0.trustedRoot = .publicKey(PublicSigningKey(root3.publicKey).publicKey)
            }
            #expect(try await repinned.model(named: "flowers").sha256 == v2.sha256)
            _ = try await device.publish("int8_conv")
            #expect(try await repinned.model(named: "flowers").version == 3)
            device.serveManifest(replayed.body, headers: ["ETag": replayed.etag])
            let error = await #expect(throws: DepotError.self) { try await repinned.model(named: "flowers") }
            #expect(error?.code == .manifestRollback)
        }
    }

    @Test func rootRotationNotSignedByThePreviousRootIsRefused() async throws {
        try await withDevice { device in
            let attackerRoot = Curve25519.Signing.PrivateKey()
            let attackerSigner = Curve25519.Signing.PrivateKey()
            let forgedRoot = RootDocument(
                version: 2, issued: Date(), expires: Date().addingTimeInterval(86_400),
                rootKeys: [PublicSigningKey(attackerRoot.publicKey)],
                manifestKeys: [PublicSigningKey(attackerSigner.publicKey)])
            device.proxy.take(
                "/v1/keys/root/2.json",
                .response(
                    status: .ok, headers: [:],
                    body: try SignedEnvelope(signing: forgedRoot, with: [attackerRoot]).encoded()))
            let real = try await device.recordManifest()
            device.serveManifest(
                try forge(real.body, signers: [attackerSigner]) { $0.manifestVersion += 1 }, headers: ["Depot-Root-Version": "2"])
            try await expectRefused(device, .untrustedRoot, keeping: 1, saying: "is not signed by 1 of the root keys of v1")
            let stored = try TrustedRoot(first: try Data(contentsOf: device.published.cache.appendingPathComponent("trust/root.json")))
            #expect(stored.document.version == 1)
        }
    }

    @Test func aFileChangedOnDiskAfterVerificationIsRefusedAtHandOff() async throws {
        try await withDevice { device in
            let model = try await device.downloader.model(named: "flowers", policy: .localModel)
            let original = try Data(contentsOf: model.fileURL)
            #expect(try model.loadVerifiedBytes().withUnsafeBytes { Data($0) } == original)

            var changed = original
            changed[changed.count - 1] ^= 0xff
            let cases: [(Data, DepotError.Code)] = [
                (changed, .digestMismatch), (original + Data([0]), .sizeMismatch),
                (original.dropLast(), .sizeMismatch),
            ]
            for (content, code) in cases {
                let handle = try FileHandle(forWritingTo: model.fileURL)
                try handle.truncate(atOffset: 0)
                try handle.write(contentsOf: content)
                try handle.close()
                let error = #expect(throws: DepotError.self) { try model.loadVerifiedBytes() }
                #expect(error?.code == code)
            }
        }
    }

    @Test func aManifestVersionThatCannotBeRecordedStopsTheUpdate() async throws {
        try await withDevice { device in
            _ = try await device.publish("float_classifier_labels")
            // A file where the trust folder belongs: nothing can be read from it (no state yet) or written into it.
            let trust = device.published.cache.appendingPathComponent("trust")
            try FileManager.default.removeItem(at: trust)
            try Data("not a folder".utf8).write(to: trust)
            try await expectRefused(device, .fileUnreadable, keeping: 1, saying: "Could not record manifest version")
        }
    }

    @Test func shortRangesAreRefusedInsteadOfAskedForever() async throws {
        try await withDevice { device in
            let v2 = try await device.publish("float_classifier_labels")
            device.proxy.take(
                "/v1/blobs/sha256/\(v2.sha256)",
                .response(
                    status: .partialContent,
                    headers: ["Content-Range": "bytes 0-\(v2.size - 1)/\(v2.size)"], body: Data()))
            try await expectRefused(device, .sizeMismatch, keeping: 1, saying: "announces 0 bytes where \(v2.size) belong")
        }
    }

    @Test func concurrentChecksNeverMoveTheTrustedRootBack() async throws {
        try await withDevice { device in
            try await Command.depot(["models", "create", "tulips"], environment: device.environment).succeeded()
            _ = try await device.publish("int8_conv", to: "tulips")
            for _ in 0..<2 {
                let rotated = try await Command.depot(
                    ["keys", "rotate", "--root-key", device.published.root.file], environment: device.environment)
                #expect(rotated.status == 0, "\(rotated.error)")
            }
            // Both checks learn of root v3. The first walks 2 -> 3 -> (4: none); the second's request
            // for 2 is answered only after that, and then 3 is hidden from it.
            let (proxy, downloader) = (device.proxy, device.downloader)
            proxy.hold("/v1/keys/root/2.json", after: 1)
            async let flowers = downloader.model(named: "flowers")
            async let tulips = downloader.model(named: "tulips")
            // The proxy and the SDK run on the test process's cooperative pool, which the suite's
            // blocking tests can hold for many seconds on 2 cores: a generous bound.
            #expect(await eventually(within: 90) { proxy.lastHeaders("/v1/keys/root/4.json") != nil })
            proxy.take("/v1/keys/root/3.json", .response(status: .notFound, headers: [:], body: Data()))
            proxy.release(held: "/v1/keys/root/2.json")
            let models = try await [flowers, tulips]
            #expect(models.map(\.name.rawValue) == ["flowers", "tulips"])
            let stored = try TrustedRoot(first: try Data(contentsOf: device.published.cache.appendingPathComponent("trust/root.json")))
            #expect(stored.document.version == 3, "the trusted root went back to v\(stored.document.version)")
        }
    }
}
