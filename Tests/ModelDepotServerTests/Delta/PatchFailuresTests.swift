import Foundation
import ModelDepotShared
import Testing

@testable import ModelDepotServer

/// A patch job that fails is tried again after 1, 2, 4, … minutes, at most a day later.
@Suite struct PatchFailuresTests {
    static let job = PatchPlan.Job(
        model: try! ModelName("flowers"), version: 2, fromVersion: 1, file: "", fromSha256: "a", fromSize: 1,
        sha256: "b", size: 1)

    @Test func failuresWaitLongerEachTimeUntilOneSucceeds() {
        let failures = PatchFailures()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(failures.isDue(Self.job, at: start))
        var now = start
        for minutes in [1.0, 2, 4, 8] {
            let retryAt = failures.failed(Self.job, at: now)
            #expect(retryAt == now.addingTimeInterval(minutes * 60))
            #expect(!failures.isDue(Self.job, at: retryAt.addingTimeInterval(-1)))
            #expect(failures.isDue(Self.job, at: retryAt))
            now = retryAt
        }
        for _ in 0..<20 { now = failures.failed(Self.job, at: now) }
        #expect(failures.failed(Self.job, at: now) == now.addingTimeInterval(86_400), "at most a day")
        var other = Self.job
        other.fromVersion = 0
        #expect(failures.isDue(other, at: start), "another job is not held back")
        failures.succeeded(Self.job)
        #expect(failures.isDue(Self.job, at: start))
    }
}
