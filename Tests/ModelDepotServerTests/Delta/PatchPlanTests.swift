import ModelDepotShared
import Testing

@testable import ModelDepotServer

/// Which patches the published versions lack.
@Suite struct PatchPlanTests {
    static let flowers = try! ModelName("flowers")

    static func file(_ version: Int, _ file: String = "", content: String? = nil, size: Int = 1_000, model: ModelName = flowers)
        -> PublishedFile
    {
        PublishedFile(model: model, version: version, file: file, sha256: content ?? "\(model)-\(version)-\(file)", size: size)
    }

    static func pairs(_ plan: PatchPlan) -> [String] {
        plan.jobs.map { "\($0.model) \($0.fromVersion)->\($0.version)\($0.file.isEmpty ? "" : " " + $0.file)" }
    }

    @Test func eachVersionFromTheFewBeforeItNewestFirst() {
        let plan = PatchPlan(files: [1, 2, 3, 5].map { Self.file($0) }, made: [], sources: 2, maximumSize: 1 << 20)
        #expect(Self.pairs(plan) == ["flowers 2->5", "flowers 3->5", "flowers 1->3", "flowers 2->3", "flowers 1->2"])
        #expect(plan.jobs[0].fromSha256 == "flowers-2-" && plan.jobs[0].sha256 == "flowers-5-" && plan.jobs[0].fromSize == 1_000)
        #expect(PatchPlan(files: [1, 2].map { Self.file($0) }, made: [], sources: 0, maximumSize: 1 << 20).jobs.isEmpty)
    }

    @Test func madePatchesAreNotMadeAgainWhetherOfferedOrNot() {
        let made = [
            StoredPatch(model: Self.flowers, version: 3, fromVersion: 2, file: "", fromSha256: "x", sha256: nil, size: 900),
            StoredPatch(model: Self.flowers, version: 3, fromVersion: 1, file: "", fromSha256: "x", sha256: "y", size: 90),
        ]
        let plan = PatchPlan(files: [1, 2, 3].map { Self.file($0) }, made: made, sources: 3, maximumSize: 1 << 20)
        #expect(Self.pairs(plan) == ["flowers 1->2"])
    }

    @Test func filesPairByNameAndIdenticalOrLargeOnesAreSkipped() {
        let files = [
            Self.file(1), Self.file(1, "labels"), Self.file(1, "vocab", size: 5_000),
            Self.file(2, content: "flowers-1-"), Self.file(2, "labels"), Self.file(2, "vocab", size: 5_000), Self.file(2, "new"),
        ]
        #expect(Self.pairs(PatchPlan(files: files, made: [], sources: 3, maximumSize: 4_096)) == ["flowers 1->2 labels"])
        let grown = [Self.file(1, size: 4_000), Self.file(2, size: 5_000)]
        #expect(PatchPlan(files: grown, made: [], sources: 3, maximumSize: 4_096).jobs.isEmpty, "a new file past the limit")
    }

    @Test func modelsArePlannedApart() throws {
        let other = try ModelName("birds")
        let files = [Self.file(1), Self.file(2), Self.file(1, model: other), Self.file(3, model: other)]
        #expect(Set(Self.pairs(PatchPlan(files: files, made: [], sources: 3, maximumSize: 1 << 20))) == ["flowers 1->2", "birds 1->3"])
    }
}
