import Foundation
import ModelDepotRollouts
import ModelDepotShared
import Testing

@testable import ModelDepotServer

/// The ``ModelCatalog`` contract, run against every backend: what the admin API and the device
/// path rely on, whichever database holds the catalog.
@Suite struct ModelCatalogContractTests {
    typealias F = CatalogFixtures
    let flowers = F.name("flowers")

    @Test(arguments: CatalogBackend.allCases)
    func modelsAreUniqueListedByNameAndDeletedOnlyWhenEmptyUnlessForced(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let created = try await catalog.createModel(
                ModelCreation(name: flowers, description: "Petals", tags: ["vision", "v2"]), at: F.instant)
            #expect(created.description == "Petals" && created.tags == ["vision", "v2"] && created.createdAt == F.instant)
            #expect(created.versionCount == 0 && created.latestVersion == nil && created.publishedVersion == nil)
            _ = try await catalog.createModel(ModelCreation(name: F.name("birds")), at: F.instant)
            let duplicate = await #expect(throws: DepotError.self) {
                try await catalog.createModel(ModelCreation(name: flowers, description: "other"), at: F.instant)
            }
            #expect(duplicate?.code == .alreadyExists)
            #expect(try await catalog.model(flowers).description == "Petals", "the refused creation changed nothing")
            #expect(try await catalog.models().map(\.name.rawValue) == ["birds", "flowers"])

            _ = try await catalog.addVersion(F.upload("a"), to: flowers, publish: true, at: F.instant)
            _ = try await catalog.addVersion(F.upload("b"), to: F.name("birds"), publish: false, at: F.instant)
            _ = try await catalog.addVersion(F.upload("a"), to: F.name("birds"), publish: false, at: F.instant)
            let refused = await #expect(throws: DepotError.self) { try await catalog.deleteModel(flowers, force: false) }
            #expect(refused?.code == .conflict)
            #expect(try await catalog.versions(of: flowers).count == 1)
            #expect(try await catalog.deleteModel(flowers, force: true) == [], "birds still references a's file")
            #expect(
                try await catalog.deleteModel(F.name("birds"), force: true) == [
                    String(repeating: "a", count: 64), String(repeating: "b", count: 64),
                ])
            let gone = await #expect(throws: DepotError.self) { try await catalog.model(flowers) }
            #expect(gone?.code == .notFound)
            #expect(try await catalog.models().isEmpty)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func companionFilesAreKeptInOrderAndCountAsReferences(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.createModel(ModelCreation(name: flowers), at: F.instant)
            let labels = try CompanionFile(name: "labels", sha256: String(repeating: "c", count: 64), size: 12)
            let settings = try CompanionFile(name: "automl", sha256: String(repeating: "d", count: 64), size: 34)
            var upload = F.upload("a")
            upload.files = [labels, settings]
            upload.uploadedBy = "k-uploader"
            let first = try await catalog.addVersion(upload, to: flowers, publish: true, at: F.instant)
            #expect(first.files == [labels, settings])
            #expect(try await catalog.version(1, of: flowers).uploadedBy == "k-uploader", "who uploaded it is kept")
            upload.files = [labels]
            _ = try await catalog.addVersion(upload, to: flowers, publish: false, at: F.instant)
            #expect(try await catalog.version(1, of: flowers).files == [labels, settings], "in upload order")
            #expect(try await catalog.versions(of: flowers).map(\.files) == [[labels], [labels, settings]])
            #expect(try await catalog.newestPublishedVersion(of: flowers)?.files == [labels, settings])
            let references = Dictionary(uniqueKeysWithValues: try await catalog.blobReferences().map { ($0.sha256, $0) })
            #expect(Set(references.keys) == [String(repeating: "a", count: 64), labels.sha256, settings.sha256])
            #expect(references[settings.sha256]?.size == 34 && references[settings.sha256]?.models == [flowers])

            #expect(try await catalog.deleteVersion(2, of: flowers) == [], "version 1 still names the model and the labels")
            #expect(
                try await catalog.deleteModel(flowers, force: true) == [String(repeating: "a", count: 64), labels.sha256, settings.sha256])
            #expect(try await catalog.blobReferences().isEmpty)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func versionNumbersGrowAndAreNeverReused(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.createModel(ModelCreation(name: flowers), at: F.instant)
            let first = try await catalog.addVersion(F.upload("a", size: 123, notes: "first"), to: flowers, publish: false, at: F.instant)
            #expect(first.version == 1 && first.size == 123 && first.notes == "first" && !first.published && first.publishedAt == nil)
            #expect(first.tflite == F.description)
            let second = try await catalog.addVersion(F.upload("b"), to: flowers, publish: true, at: F.instant)
            #expect(second.version == 2 && second.published && second.publishedAt == F.instant)
            #expect(try await catalog.version(1, of: flowers) == first)
            #expect(try await catalog.versions(of: flowers) == [second, first], "newest first")

            #expect(try await catalog.deleteVersion(2, of: flowers) == [String(repeating: "b", count: 64)])
            let third = try await catalog.addVersion(F.upload("c"), to: flowers, publish: false, at: F.instant)
            #expect(third.version == 3, "2 was deleted but is not given again")
            let summary = try await catalog.model(flowers)
            #expect(summary.versionCount == 2 && summary.latestVersion == 3 && summary.publishedVersion == nil)
            let missing = await #expect(throws: DepotError.self) { try await catalog.version(2, of: flowers) }
            #expect(missing?.code == .notFound)
            let noModel = await #expect(throws: DepotError.self) {
                try await catalog.addVersion(F.upload("d"), to: F.name("tulips"), publish: true, at: F.instant)
            }
            #expect(noModel?.code == .notFound)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func concurrentUploadsGetDistinctNumbersAndConcurrentCreationsOneWinner(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.createModel(ModelCreation(name: flowers), at: F.instant)
            let numbers = try await withThrowingTaskGroup(of: Int.self) { group in
                for digit in "0123456789" {
                    group.addTask { try await catalog.addVersion(F.upload(digit), to: flowers, publish: true, at: F.instant).version }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(numbers.sorted() == Array(1...10))
            let outcomes = await withTaskGroup(of: DepotError.Code?.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        do {
                            _ = try await catalog.createModel(ModelCreation(name: F.name("tulips")), at: F.instant)
                            return nil
                        } catch { return (error as? DepotError)?.code ?? .internalError }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == nil }.count == 1)
            #expect(outcomes.compactMap { $0 } == Array(repeating: .alreadyExists, count: 7))
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func publishingAndTheRolloutGuardEachOther(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.createModel(ModelCreation(name: flowers), at: F.instant)
            _ = try await catalog.addVersion(F.upload("a"), to: flowers, publish: true, at: F.instant)
            _ = try await catalog.addVersion(F.upload("b"), to: flowers, publish: false, at: F.instant)
            #expect(try await catalog.newestPublishedVersion(of: flowers)?.version == 1)

            let unpublished = await #expect(throws: DepotError.self) {
                try await catalog.changeRollout(of: flowers, by: "key-1", at: F.instant) { _ in Rollout(defaultVersion: 2) }
            }
            #expect(unpublished?.code == .badRequest)
            #expect(try await catalog.rollout(of: flowers) == Rollout())
            #expect(try await catalog.rolloutHistory(of: flowers).isEmpty)

            let later = F.instant.addingTimeInterval(60)
            let published = try await catalog.setPublished(true, version: 2, of: flowers, at: later)
            #expect(published.published && published.publishedAt == later)
            #expect(try await catalog.newestPublishedVersion(of: flowers)?.version == 2)
            let split = try RolloutSplit(shares: [(version: 1, basisPoints: 9_000), (version: 2, basisPoints: 1_000)])
            let rule = Rollout.Rule(
                id: "r1", name: "ios", salt: "s", conditions: [try RolloutCondition(parsing: "platform == ios")], split: split)
            let after = try await catalog.changeRollout(of: flowers, by: "key-1", at: later) { _ in
                Rollout(defaultVersion: 1, rules: [rule])
            }
            #expect(try await catalog.rollout(of: flowers) == after)
            _ = try await catalog.changeRollout(of: flowers, by: "key-2", at: later) { $0 }

            let unpublishing = await #expect(throws: DepotError.self) {
                try await catalog.setPublished(false, version: 2, of: flowers, at: later)
            }
            let deleting = await #expect(throws: DepotError.self) { try await catalog.deleteVersion(1, of: flowers) }
            for refused in [unpublishing, deleting] {
                #expect(refused?.code == .conflict)
                #expect(refused?.message.contains("rollout hands it out") == true)
            }
            #expect(try await catalog.versions(of: flowers).map(\.published) == [true, true])

            let history = try await catalog.rolloutHistory(of: flowers)
            #expect(history.count == 1, "a change that changes nothing is not recorded")
            #expect(history.first == RolloutChange(keyID: "key-1", at: later, before: Rollout(), after: after))
            _ = try await catalog.changeRollout(of: flowers, by: "key-3", at: later) { _ in Rollout() }
            #expect(try await catalog.setPublished(false, version: 2, of: flowers, at: later).published == false)
            #expect(try await catalog.version(2, of: flowers).publishedAt == later, "unpublishing keeps when it was published")
            #expect(try await catalog.rolloutHistory(of: flowers).map(\.keyID) == ["key-1", "key-3"])
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func usageAddsUpAndInstallationsKeepTheirFirstMinute(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.createModel(ModelCreation(name: flowers), at: F.instant)
            _ = try await catalog.createModel(ModelCreation(name: F.name("birds")), at: F.instant)
            _ = try await catalog.addVersion(F.upload("a"), to: flowers, publish: true, at: F.instant)
            _ = try await catalog.addVersion(F.upload("a"), to: F.name("birds"), publish: true, at: F.instant)
            let digest = String(repeating: "a", count: 64)
            let counts: [UsageCounter.Key: Int] = [
                UsageCounter.Key(subject: .manifest(model: flowers, version: 1), arm: .default, minute: 100): 5,
                UsageCounter.Key(subject: .manifest(model: flowers, version: 1), arm: .rule(id: "r1"), minute: 101): 2,
                UsageCounter.Key(subject: .download(sha256: digest), arm: .default, minute: 100): 3,
            ]
            let seen = [
                UsageCounter.Installation(model: flowers, arm: .default, version: 1, installation: -42): 100,
                UsageCounter.Installation(model: flowers, arm: .default, version: 1, installation: 7): 101,
            ]
            try await catalog.recordUsage(counts, installations: seen)
            try await catalog.recordUsage(
                counts, installations: [UsageCounter.Installation(model: flowers, arm: .default, version: 1, installation: 7): 90])

            let usage = Set(try await catalog.usage(of: flowers, sinceMinute: 0))
            #expect(
                usage == [
                    UsageRow(version: 1, arm: .default, kind: .manifest, minute: 100, count: 10),
                    UsageRow(version: 1, arm: .rule(id: "r1"), kind: .manifest, minute: 101, count: 4),
                    UsageRow(version: 1, arm: .default, kind: .download, minute: 100, count: 6),
                ])
            #expect(
                try await catalog.usage(of: F.name("birds"), sinceMinute: 0)
                    == [UsageRow(version: 1, arm: .default, kind: .download, minute: 100, count: 6)],
                "a download counts for every version with that file")
            #expect(try await catalog.usage(of: flowers, sinceMinute: 101).map(\.count) == [4])
            #expect(
                try await catalog.installations(of: flowers, sinceMinute: 0) == [InstallationCount(arm: .default, version: 1, count: 2)])
            #expect(
                try await catalog.installations(of: flowers, sinceMinute: 101) == [InstallationCount(arm: .default, version: 1, count: 1)],
                "an installation seen again keeps its first minute")
            try await catalog.recordUsage(
                [UsageCounter.Key(subject: .manifest(model: F.name("tulips"), version: 1), arm: .default, minute: 1): 1],
                installations: [:])
            #expect(try await catalog.usage(of: flowers, sinceMinute: 0).count == 3, "counts for a deleted model are dropped")
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func armsAreStoredAsTheirTextAndReadBackAsTheSameArms(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.createModel(ModelCreation(name: flowers), at: F.instant)
            _ = try await catalog.addVersion(F.upload("a"), to: flowers, publish: true, at: F.instant)
            // Every arm the server counts, and text an older server may have written.
            let arms: [CountedArm] = [.pin, .default, .rule(id: "r-1a2b3c4d"), .latest, .unknown, .unrecognized("bundled ü")]
            var counts: [UsageCounter.Key: Int] = [:]
            var seen: [UsageCounter.Installation: Int] = [:]
            for (index, arm) in arms.enumerated() {
                counts[UsageCounter.Key(subject: .manifest(model: flowers, version: 1), arm: arm, minute: 100)] = index + 1
                seen[UsageCounter.Installation(model: flowers, arm: arm, version: 1, installation: Int64(index))] = 100
            }
            try await catalog.recordUsage(counts, installations: seen)

            let usage = try await catalog.usage(of: flowers, sinceMinute: 0)
            let texts = Dictionary(uniqueKeysWithValues: usage.map { ($0.arm.stored, $0.count) })
            #expect(texts == ["pin": 1, "default": 2, "rule:r-1a2b3c4d": 3, "latest": 4, "unknown": 5, "bundled ü": 6])
            let ruleIDs = usage.compactMap { row -> String? in
                guard case .rule(let id) = row.arm else { return nil }
                return id
            }
            #expect(ruleIDs == ["r-1a2b3c4d"], "a rule's arm is read back as that rule")
            #expect(usage.allSatisfy { $0.kind == .manifest })
            let installed = try await catalog.installations(of: flowers, sinceMinute: 0)
            #expect(Set(installed.map(\.arm.stored)) == ["pin", "default", "rule:r-1a2b3c4d", "latest", "unknown", "bundled ü"])
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func keysAreStoredRevokedAndTheLastAdminTokenKept(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let hash = Array(repeating: UInt8(7), count: 32)
            let admin = AccessKey(id: "adm1", kind: .admin, name: "first", models: nil, createdAt: F.instant, revokedAt: nil)
            let app = AccessKey(
                id: "app1", kind: .app, name: "phones", models: [flowers], createdAt: F.instant.addingTimeInterval(1), revokedAt: nil)
            try await catalog.createKey(admin, secretHash: hash)
            try await catalog.createKey(app, secretHash: Array(repeating: 9, count: 32))
            let duplicate = await #expect(throws: DepotError.self) { try await catalog.createKey(app, secretHash: hash) }
            #expect(
                duplicate?.code == .alreadyExists && duplicate?.message == "A key with id 'app1' exists already.",
                "\(String(describing: duplicate))")
            #expect(try await catalog.keys() == [admin, app])
            #expect(try await catalog.key(id: "app1")?.secretHash == Array(repeating: 9, count: 32))
            #expect(try await catalog.key(id: "nope") == nil)

            let last = await #expect(throws: DepotError.self) { try await catalog.revokeKey(id: "adm1", at: F.instant) }
            #expect(last?.code == .conflict)
            let revoked = try await catalog.revokeKey(id: "app1", at: F.instant.addingTimeInterval(5))
            #expect(revoked.revokedAt == F.instant.addingTimeInterval(5))
            #expect(
                try await catalog.revokeKey(id: "app1", at: F.instant.addingTimeInterval(9)).revokedAt == F.instant.addingTimeInterval(5),
                "revoking again keeps the first revocation")
            #expect(try await catalog.workingKeys().map(\.key.id) == ["adm1"])
            let unknown = await #expect(throws: DepotError.self) { try await catalog.revokeKey(id: "nope", at: F.instant) }
            #expect(unknown?.code == .notFound)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func concurrentRevocationsNeverRevokeEveryAdminToken(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            for index in 0..<4 {
                try await catalog.createKey(
                    AccessKey(id: "adm\(index)", kind: .admin, name: "", models: nil, createdAt: F.instant, revokedAt: nil),
                    secretHash: Array(repeating: UInt8(index), count: 32))
            }
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<4 { group.addTask { _ = try? await catalog.revokeKey(id: "adm\(index)", at: F.instant) } }
            }
            #expect(try await catalog.workingKeys().count == 1)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func manifestVersionsRiseWithEveryChangeOutliveTheModelAndRootDocumentsAreImmutable(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let milliseconds = Int(F.instant.timeIntervalSince1970 * 1000)
            _ = try await catalog.createModel(ModelCreation(name: flowers), at: F.instant)
            #expect(
                try await catalog.manifestVersion(of: flowers, notBelow: 0) == milliseconds, "64 bits: at least the change's time in ms")
            #expect(
                try await catalog.manifestVersion(of: flowers, notBelow: milliseconds + 5_000) == milliseconds,
                "reading changes nothing, whatever the reader's clock")
            _ = try await catalog.addVersion(F.upload("a"), to: flowers, publish: false, at: F.instant)
            #expect(
                try await catalog.manifestVersion(of: flowers, notBelow: 0) == milliseconds + 1,
                "a change in the same millisecond still raises it")
            let later = F.instant.addingTimeInterval(10)
            _ = try await catalog.setPublished(true, version: 1, of: flowers, at: later)
            #expect(try await catalog.manifestVersion(of: flowers, notBelow: 0) == milliseconds + 10_000)
            _ = try await catalog.setPublished(true, version: 1, of: flowers, at: later.addingTimeInterval(5))
            _ = try await catalog.changeRollout(of: flowers, by: "k", at: later.addingTimeInterval(5)) { $0 }
            #expect(
                try await catalog.manifestVersion(of: flowers, notBelow: 0) == milliseconds + 10_000, "what changes nothing raises nothing")
            _ = try await catalog.changeRollout(of: flowers, by: "k", at: later) { _ in Rollout(defaultVersion: 1) }
            #expect(try await catalog.manifestVersion(of: flowers, notBelow: 0) == milliseconds + 10_001)
            _ = try await catalog.changeRollout(of: flowers, by: "k", at: later) { _ in Rollout() }
            _ = try await catalog.setPublished(false, version: 1, of: flowers, at: later)
            _ = try await catalog.deleteVersion(1, of: flowers)
            #expect(try await catalog.manifestVersion(of: flowers, notBelow: 0) == milliseconds + 10_004)

            _ = try await catalog.deleteModel(flowers, force: true)
            let gone = await #expect(throws: DepotError.self) { try await catalog.manifestVersion(of: flowers, notBelow: 0) }
            #expect(gone?.code == .notFound)
            _ = try await catalog.createModel(ModelCreation(name: flowers), at: Date(timeIntervalSince1970: 1_000))
            #expect(
                try await catalog.manifestVersion(of: flowers, notBelow: 0) == milliseconds + 10_005,
                "a model created again (even by a clock set back) goes on from its name's versions")

            #expect(try await catalog.latestRootDocument() == nil)
            try await catalog.addRootDocument(version: 1, envelope: Data("one".utf8), at: F.instant)
            try await catalog.addRootDocument(version: 2, envelope: Data([0, 255, 1]), at: F.instant)
            let again = await #expect(throws: DepotError.self) {
                try await catalog.addRootDocument(version: 1, envelope: Data("x".utf8), at: F.instant)
            }
            #expect(again?.code == .conflict)
            #expect(try await catalog.rootDocument(version: 1) == Data("one".utf8))
            #expect(try await catalog.latestRootDocument() == Data([0, 255, 1]))
            #expect(try await catalog.rootDocument(version: 3) == nil)
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func blobReferencesNameEveryModelUsingAFile(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.createModel(ModelCreation(name: flowers), at: F.instant)
            _ = try await catalog.createModel(ModelCreation(name: F.name("birds")), at: F.instant)
            _ = try await catalog.addVersion(F.upload("a", size: 10), to: flowers, publish: false, at: F.instant)
            _ = try await catalog.addVersion(F.upload("a", size: 10), to: flowers, publish: false, at: F.instant)
            _ = try await catalog.addVersion(F.upload("a", size: 10), to: F.name("birds"), publish: false, at: F.instant)
            _ = try await catalog.addVersion(F.upload("b", size: 20), to: F.name("birds"), publish: false, at: F.instant)
            let references = try await catalog.blobReferences().sorted { $0.sha256 < $1.sha256 }
            #expect(references.map(\.sha256) == [String(repeating: "a", count: 64), String(repeating: "b", count: 64)])
            #expect(references.map(\.size) == [10, 20])
            #expect(references.map { Set($0.models.map(\.rawValue)) } == [["flowers", "birds"], ["birds"]])
        }
    }

    /// Batch ids are remembered until pruned: before, a batch sent again changes nothing; after,
    /// it counts again (a device stops resending long before the prune).
    @Test(arguments: CatalogBackend.allCases)
    func outcomeBatchIdsAreRememberedUntilPruned(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.createModel(ModelCreation(name: flowers), at: F.instant)
            _ = try await catalog.addVersion(F.upload("a"), to: flowers, publish: true, at: F.instant)
            let hour = 500_000
            let batch = OutcomeBatchRecord(
                id: "5f0c2a9e-3b1d-4c7e-9a2f-8d1e6b4c0a37", installation: 42, receivedHour: hour, events: 1,
                totals: [.init(metric: "installed", arm: .default, version: 1, hour: hour, network: 1, count: 1, sum: 1)],
                exposures: [.init(arm: .default, version: 1, hour: hour, network: 1)], appMetrics: [])
            func record() async throws -> Bool { try await catalog.recordOutcomes([(flowers, batch)])[0].get() }
            #expect(try await record())
            try await catalog.pruneOutcomes(batchesBefore: hour, rowsBefore: hour)
            #expect(try await !record(), "an id of the hour pruned before is still known")
            try await catalog.pruneOutcomes(batchesBefore: hour + 1, rowsBefore: hour)
            #expect(try await record(), "once pruned, the id is free")
            let rows = try await catalog.outcomes(of: flowers)["installed"]?[.default]
            #expect(rows == [OutcomeRow(version: 1, hour: hour, installation: 42, network: 1, count: 2, sum: 2)])
        }
    }

    /// Outcome rows past the retention window go, with the exposures only they held; a guard
    /// reads its arm's counted rows of its versions from its start, and nothing else.
    @Test(arguments: CatalogBackend.allCases)
    func outcomesArePrunedPastTheRetentionAndAGuardReadsOnlyItsOwn(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            _ = try await catalog.createModel(ModelCreation(name: flowers), at: F.instant)
            for file: Character in ["a", "b", "c"] {
                _ = try await catalog.addVersion(F.upload(file), to: flowers, publish: true, at: F.instant)
            }
            let hour = 500_000
            var next = 0
            func batch(installation: Int64, hour: Int, version: Int = 1, arm: CountedArm = .rule(id: "r-1"), network: Int64 = 7)
                -> (ModelName, OutcomeBatchRecord)
            {
                next += 1
                return (
                    flowers,
                    OutcomeBatchRecord(
                        id: String(format: "00000000-0000-4000-8000-%012d", next), installation: installation, receivedHour: hour,
                        events: 1,
                        totals: [.init(metric: "installed", arm: arm, version: version, hour: hour, network: network, count: 1, sum: 1)],
                        exposures: [.init(arm: arm, version: version, hour: hour, network: network)], appMetrics: [])
                )
            }
            _ = try await catalog.recordOutcomes([
                batch(installation: 1, hour: hour - 10), batch(installation: 1, hour: hour + 1), batch(installation: 2, hour: hour - 10),
                batch(installation: 3, hour: hour + 2, version: 2), batch(installation: 4, hour: hour + 2, version: 3),
                batch(installation: 5, hour: hour + 2, arm: .default), batch(installation: 6, hour: hour + 2, network: 0),
            ])
            let guarded = try await catalog.countedOutcomes(of: flowers, arm: .rule(id: "r-1"), versions: [1, 2], fromHour: hour)
            #expect(
                Set((guarded["installed"] ?? []).map(\.installation)) == [1, 3],
                "from the guard's start, its versions, its arm, counted: \(guarded)")

            try await catalog.pruneOutcomes(batchesBefore: 0, rowsBefore: hour)
            let rows = try await catalog.outcomes(of: flowers)["installed"]?[.rule(id: "r-1")] ?? []
            #expect(rows.allSatisfy { $0.hour >= hour } && rows.count == 4, "\(rows)")
            let exposures = try await catalog.exposures(of: flowers)[.rule(id: "r-1")] ?? []
            #expect(Set(exposures.map(\.installation)) == [1, 3, 4, 6], "installation 2 had only old rows: \(exposures)")
            #expect(exposures.first { $0.installation == 1 }?.hour == hour + 1, "its first hour kept")
        }
    }
}
