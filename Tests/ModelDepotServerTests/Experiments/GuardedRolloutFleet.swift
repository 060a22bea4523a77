import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotRollouts
import ModelDepotShared
import Synchronization
import TestSupport

@testable import ModelDepotServer

/// A simulated fleet of SDK-shaped devices against a live server: each simulated hour every
/// device asks for the manifest with its installation id (and the ETag of the one it has, as the
/// SDK does), runs the version it was given, and sends the outcome batch the SDK would
/// (installed, load succeeded or failed, inferences, latency, and the app's `accepted`), with the
/// server's clock moved by the test.
final class GuardedRolloutFleet: Sendable {
    /// What one device does with a version.
    struct Behaviour: Sendable {
        /// Whether loading fails.
        var loadFails = false
        /// Whether it sends its batch at all.
        var reports = true
        /// Whether its user accepts an answer this hour.
        var accepts = false
    }

    /// Numbers the devices first seen on each version in the order they are seen: 0, 1, 2 … per
    /// version. A device keeps its number on a version.
    final class Ordinals: Sendable {
        private struct Seen: Hashable { let device: Int, version: Int }
        private let numbered = Mutex<(seen: [Int: Int], given: [Seen: Int])>(([:], [:]))

        init() {}

        func ordinal(of device: Int, on version: Int) -> Int {
            numbered.withLock { state in
                let key = Seen(device: device, version: version)
                if let given = state.given[key] { return given }
                let seen = state.seen[version, default: 0]
                state.seen[version] = seen + 1
                state.given[key] = seen
                return seen
            }
        }
    }

    /// Picks exactly `picks` devices in every `every` among those first seen on a version: a
    /// share of a version's devices without the luck of which ones the rule's buckets give it.
    /// A device keeps the answer it was first given for a version.
    final class Share: Sendable {
        private let ordinals = Ordinals()
        let every: Int
        let picks: Int

        init(_ picks: Int, in every: Int) {
            self.picks = picks
            self.every = every
        }

        func contains(_ device: Int, on version: Int) -> Bool {
            ordinals.ordinal(of: device, on: version) % every < picks
        }
    }

    private struct Held: Sendable {
        let etag: String
        let version: Int
        let arm: String
    }

    /// A server for a fleet: on `clock`, trusting 127.0.0.1 as a proxy so that each device's
    /// `X-Forwarded-For` (``address(of:)``) is its client address.
    static func server(_ backend: DepotBackend = .sqliteAndFiles, clock: MovableClock) async throws -> TestServer {
        var server = try await TestServer(backend)
        server.configuration.clock = { clock.now }
        server.configuration.trustedProxies = [try AddressRange("127.0.0.1")]
        return server
    }

    /// Device `device`'s address: 16 devices to a /24, as devices spread over many networks.
    static func address(of device: Int) -> String { "10.\(device / 4_096 % 256).\(device / 16 % 256).\(device % 16 + 1)" }

    let client: TestServer.Client
    let key: HTTPFields
    let clock: MovableClock
    let devices: Int
    let behaviour: @Sendable (_ device: Int, _ version: Int) -> Behaviour
    private let held = Mutex<[Int: Held]>([:])
    /// Spreads the inference latencies alike over every version's devices (240 to 246 ms, by the
    /// order they are first seen on it), so that no version is slower by the luck of the buckets.
    private let latencies = Ordinals()

    init(
        client: TestServer.Client, key: HTTPFields, clock: MovableClock, devices: Int,
        behaviour: @escaping @Sendable (_ device: Int, _ version: Int) -> Behaviour
    ) {
        self.client = client
        self.key = key
        self.clock = clock
        self.devices = devices
        self.behaviour = behaviour
    }

    /// One hour: every device checks and reports; returns devices per version.
    @discardableResult
    func hour() async throws -> [Int: Int] {
        let now = Int(clock.now.timeIntervalSince1970)
        var perVersion: [Int: Int] = [:]
        try await withThrowingTaskGroup(of: Int.self) { group in
            var next = 0
            func add() {
                let device = next
                next += 1
                group.addTask { try await self.run(device, at: now) }
            }
            // As many devices at once as the live client has connections (8): a device never waits
            // for a connection, so its deadline is spent on its own requests even when the machine
            // is busy with other suites.
            for _ in 0..<min(8, devices) { add() }
            while let version = try await group.next() {
                perVersion[version, default: 0] += 1
                if next < devices { add() }
            }
        }
        return perVersion
    }

    private func run(_ device: Int, at now: Int) async throws -> Int {
        var headers = key
        headers[HTTPField.Name("X-Forwarded-For")!] = Self.address(of: device)
        let sent = headers
        headers[HTTPField.Name(DepotHeader.installationID)!] = "sim-device-\(device)"
        let had = held.withLock { $0[device] }
        if let had { headers[.ifNoneMatch] = had.etag }
        let response = try await client.request(.get, "/v1/models/flowers/manifest", headers: headers)
        let exposure = response.headers[HTTPField.Name(DepotHeader.exposure)!]
        let manifest: (version: Int, arm: String)
        if response.status == .notModified, let had {
            manifest = (had.version, had.arm)
        } else if response.status == .ok, let etag = response.headers[.eTag] {
            let signed = try response.manifest()
            manifest = (signed.version, signed.arm)
            held.withLock { $0[device] = Held(etag: etag, version: signed.version, arm: signed.arm) }
        } else {
            throw TestServer.Failure("manifest: \(response.status) \(response.text)")
        }
        let does = behaviour(device, manifest.version)
        guard does.reports else { return manifest.version }
        func event(_ metric: String, value: Double? = nil, code: String? = nil, count: Int? = nil) -> OutcomeBatch.Event {
            OutcomeBatch.Event(
                metric: metric, version: manifest.version, arm: manifest.arm, at: now, value: value, code: code, count: count)
        }
        var events = [event("installed")]
        if does.loadFails {
            events.append(event("load_failed", code: "unsupported_operator"))
        } else {
            events += [
                event("load_succeeded"), event("inferences", value: 20, count: 20),
                event(
                    "inference_latency_ms", value: Double(20 * (240 + latencies.ordinal(of: device, on: manifest.version) % 7)),
                    count: 20),
            ]
        }
        if does.accepts { events.append(event("accepted")) }
        let batch = OutcomeBatch(
            batch: UUID().uuidString, installation: "sim-device-\(device)", events: events,
            exposures: exposure.map { [.init(version: manifest.version, arm: manifest.arm, token: $0)] } ?? [])
        let answer = try await client.json(.post, "/v1/models/flowers/events", batch, headers: sent)
        guard answer.status == .ok, try answer.decode(OutcomeReceipt.self).refused == nil else {
            throw TestServer.Failure("events: \(answer.status) \(answer.text)")
        }
        return manifest.version
    }

    /// Asks the server to review the model's guards now.
    func review() async throws -> RolloutGuard {
        let response = try await client.request(.post, "/v1/admin/models/flowers/rollout/guards/review")
        guard response.status == .ok, let found = try response.decode(RolloutGuards.self).guards.last else {
            throw TestServer.Failure("review: \(response.status) \(response.text)")
        }
        return found
    }

    /// Hours of checking and reporting, with a review half an hour into each, until the guard
    /// leaves `running` or `hours` have passed; returns the guard and the share at each review.
    func simulate(hours: Int) async throws -> (rolloutGuard: RolloutGuard, shares: [Int]) {
        var shares: [Int] = []
        for _ in 0..<hours {
            try await hour()
            clock.advance(by: 1_800)
            let reviewed = try await review()
            shares.append(reviewed.state == .rolledBack ? 0 : reviewed.share)
            clock.advance(by: 1_800)
            if reviewed.state != .running { return (reviewed, shares) }
        }
        return (try await review(), shares)
    }

    /// A model with versions 1 and 2, rule `main` giving every device version 1, and an app key;
    /// the clock starts five minutes into an hour.
    /// Creates model `flowers` with versions 1 and 2 and rule `main` (all on version 1), and an app key.
    ///
    /// The rule's salt is new each run. A salt that would split `devices` devices so unevenly at a
    /// guard stage that the sample-ratio check flags it (about 1 salt in 200 for 1,000 devices) is
    /// drawn again, so that a test sees a mismatch only where it makes one.
    static func prepare(_ client: TestServer.Client, clock: MovableClock, devices: Int = 0) async throws -> HTTPFields {
        let seconds = clock.now.timeIntervalSince1970
        clock.advance(by: 3_600 - seconds.truncatingRemainder(dividingBy: 3_600) + 300)
        try await client.createModel("flowers")
        _ = try await client.upload("float_classifier", to: "flowers")
        _ = try await client.upload("int8_conv", to: "flowers")
        let rule = RolloutRuleChange(conditions: [], shares: [.init(version: 1, basisPoints: 10_000)])
        for _ in 0..<20 {
            let set = try await client.json(.put, "/v1/admin/models/flowers/rollout/rules/main", rule)
            guard set.status == .ok else { throw TestServer.Failure("rule: \(set.status) \(set.text)") }
            let rollout = try await client.request(.get, "/v1/admin/models/flowers/rollout").decode(Rollout.self)
            guard let salt = rollout.rules.first(where: { $0.name == "main" })?.salt else {
                throw TestServer.Failure("rule main is missing")
            }
            if try splitsEvenly(devices, salt: salt) { return try await client.appKey() }
            _ = try await client.request(.delete, "/v1/admin/models/flowers/rollout/rules/main")
        }
        throw TestServer.Failure("20 salts in a row split \(devices) devices unevenly")
    }

    /// Whether the guard's stages (1, 5, 25 and 50 % for version 2) give version 2 as many of the
    /// devices as the sample-ratio check accepts, and the first stage gives it at least 5 devices
    /// on more networks than a guard asks for by default (it leaves out each version's largest).
    /// For 1,000 devices about 1 salt in 30 gives fewer, and the first stage could never pass.
    private static func splitsEvenly(_ devices: Int, salt: String) throws -> Bool {
        let buckets = (0..<devices).map { RolloutBucket.bucket(salt: salt, installationID: "sim-device-\($0)") }
        var split = try RolloutSplit(shares: [(version: 1, basisPoints: 10_000)])
        for share in [100, 500, 2_500, 5_000] {
            split = try split.resized(to: [1: 10_000 - share, 2: share])
            var observed: [Int: Int] = [:]
            for bucket in buckets { if let version = split.version(forBucket: bucket) { observed[version, default: 0] += 1 } }
            if SampleRatioCheck(rule: "main", name: "main", shares: [1: 10_000 - share, 2: share], observed: observed).mismatch {
                return false
            }
            if share == 100, devices > 0 {
                let treated = buckets.indices.filter { split.version(forBucket: buckets[$0]) == 2 }
                let networks = Set(treated.map { address(of: $0).split(separator: ".").dropLast() })
                guard treated.count >= 5, networks.count > RolloutGuardSettings.defaultMinimumNetworks else { return false }
            }
        }
        return true
    }

    /// Starts guarding rule `main` with version 2.
    /// Stages last 50 minutes, so that each hour's review finds the stage done.
    static func start(
        _ client: TestServer.Client, stages: [Int] = RolloutGuardSettings.defaultStages, minimumInstallations: Int,
        minimumNetworks: Int = RolloutGuardSettings.defaultMinimumNetworks, webhook: URL? = nil, secret: String? = nil
    ) async throws -> RolloutGuard {
        let settings = try RolloutGuardSettings(
            stages: stages, stageSeconds: 3_000, minimumInstallations: minimumInstallations, minimumNetworks: minimumNetworks,
            webhook: webhook)
        let response = try await client.json(
            .put, "/v1/admin/models/flowers/rollout/guards/main",
            RolloutGuardStart(to: 2, settings: settings, webhookSecret: secret))
        guard response.status == .created else { throw TestServer.Failure("guard: \(response.status) \(response.text)") }
        return try response.decode(RolloutGuard.self)
    }
}
