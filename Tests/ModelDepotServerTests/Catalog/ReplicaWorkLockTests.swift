import Foundation
import TestSupport
import Testing

@testable import ModelDepotServer

/// Exactly one replica reviews guarded rollouts at a time: while one holds the lock, another's
/// try is skipped and its wait lasts until the first is done. One process (SQLite) and two
/// replicas sharing PostgreSQL (two catalogs, two connection pools, one database).
@Suite struct ReplicaWorkLockTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case local, postgres
        var testDescription: String { rawValue }
    }

    actor Log {
        private(set) var entries: [String] = []
        func add(_ entry: String) { entries.append(entry) }
    }

    func withTwoReplicas(_ backend: Backend, _ body: (any ReplicaWorkLock, any ReplicaWorkLock) async throws -> Void) async throws {
        switch backend {
        case .local:
            let lock = LocalReplicaWorkLock()
            try await body(lock, lock)
        case .postgres:
            let url = try await TestPostgres.freshDatabase()
            let first = try await PostgresModelCatalog.forTest(try PostgresLocation(url: url))
            defer { first.close() }
            let second = try await PostgresModelCatalog.forTest(try PostgresLocation(url: url))
            defer { second.close() }
            try await body(
                PostgresReplicaWorkLock(catalog: first, key: PostgresReplicaWorkLock.guardReview),
                PostgresReplicaWorkLock(catalog: second, key: PostgresReplicaWorkLock.guardReview))
        }
    }

    @Test(arguments: Backend.allCases)
    func whileOneReplicaReviewsAnothersTryIsSkippedAndItsWaitComesAfter(_ backend: Backend) async throws {
        try await withTwoReplicas(backend) { first, second in
            let log = Log()
            let (entered, enter) = AsyncStream<Void>.makeStream()
            let (released, release) = AsyncStream<Void>.makeStream()
            let reviewing = Task {
                try await first.exclusively(wait: false) {
                    await log.add("first in")
                    enter.yield()
                    for await _ in released { break }
                    await log.add("first out")
                    return 1
                }
            }
            for await _ in entered { break }
            let skipped = try await second.exclusively(wait: false) {
                await log.add("second ran while the first reviewed")
                return 2
            }
            #expect(skipped == nil, "the second replica's try is skipped")
            let waiting = Task {
                try await second.exclusively(wait: true) {
                    await log.add("second in")
                    return 3
                }
            }
            release.yield()
            #expect(try await reviewing.value == 1)
            #expect(try await waiting.value == 3)
            #expect(await log.entries == ["first in", "first out", "second in"])
            #expect(try await first.exclusively(wait: false) { 4 } == 4, "the lock is free again")
        }
    }
}
