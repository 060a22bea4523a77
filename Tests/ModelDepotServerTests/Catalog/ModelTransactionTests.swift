import Foundation
import ModelDepotRollouts
import ModelDepotShared
import Testing

@testable import ModelDepotServer

/// The transaction value alone: what a flow's changes write, and when manifests change.
struct ModelTransactionTests {
    typealias F = CatalogFixtures
    let flowers = F.name("flowers")

    func transaction(last: Int = 0, versions: [ModelVersion] = [], rollout: Rollout = Rollout()) -> ModelTransaction {
        ModelTransaction(name: flowers, lastVersionNumber: last, versions: versions, rollout: rollout, guards: [], declaredMetrics: [])
    }

    @Test func aNewVersionTakesTheNumberAfterTheLastEverGivenAndChangesManifestsAtItsTime() {
        var model = transaction(last: 4)
        let added = model.addVersion(F.upload("a"), publish: true, at: F.instant)
        #expect(added.version == 5 && added.published && added.publishedAt == F.instant)
        #expect(model.writes == [.addVersion(added)])
        #expect(model.manifestsChanged == .init(at: F.instant))
        #expect(model.published == [5])
    }

    @Test func publishingWhatIsPublishedWritesNothingAndRepublishingTakesTheNewTime() throws {
        var model = transaction()
        _ = model.addVersion(F.upload("a"), publish: true, at: F.instant)
        var unchanged = model
        _ = try unchanged.setPublished(true, version: 1, at: F.instant.addingTimeInterval(60))
        #expect(unchanged.writes == model.writes)

        let later = F.instant.addingTimeInterval(3_600)
        let unpublished = try model.setPublished(false, version: 1, at: later)
        #expect(!unpublished.published && unpublished.publishedAt == F.instant, "unpublishing keeps when it was published")
        let republished = try model.setPublished(true, version: 1, at: later)
        #expect(republished.publishedAt == later)
        #expect(model.writes.suffix(2) == [.setPublished(unpublished), .setPublished(republished)])
        #expect(model.manifestsChanged == .init(at: later))
    }

    @Test func aMissingVersionIsRefusedAndWritesNothing() {
        var model = transaction(last: 3)
        #expect(throws: DepotError.self) { try model.deleteVersion(2) }
        #expect(throws: DepotError.self) { try model.setPublished(true, version: 2, at: F.instant) }
        #expect(model.writes.isEmpty && model.manifestsChanged == nil)
    }

    @Test func deletingAVersionChangesManifestsWithoutATimeAndKeepsItsNumberTaken() throws {
        var model = transaction()
        _ = model.addVersion(F.upload("a"), publish: false, at: F.instant)
        var deleting = transaction(last: 1, versions: model.versions)
        try deleting.deleteVersion(1)
        #expect(deleting.writes == [.deleteVersion(1)] && deleting.manifestsChanged == .init(at: nil))
        #expect(deleting.addVersion(F.upload("b"), publish: false, at: F.instant).version == 2)
    }

    @Test func anUnchangedRolloutWritesNoAuditEntryAndAChangedOneRecordsBeforeAndAfter() {
        var model = transaction(rollout: Rollout(defaultVersion: 1))
        model.save(rollout: Rollout(defaultVersion: 1), guards: [], by: "key-1", at: F.instant)
        #expect(model.writes.isEmpty && model.manifestsChanged == nil)
        model.save(rollout: Rollout(defaultVersion: 2), guards: [], by: "key-1", at: F.instant)
        #expect(
            model.writes == [
                .saveRollout(
                    RolloutChange(keyID: "key-1", at: F.instant, before: Rollout(defaultVersion: 1), after: Rollout(defaultVersion: 2)))
            ])
        #expect(model.rollout == Rollout(defaultVersion: 2) && model.manifestsChanged == .init(at: F.instant))
    }
}
