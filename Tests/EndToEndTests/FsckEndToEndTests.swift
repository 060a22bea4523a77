import Foundation
import ModelDepotShared
import Testing

/// `depot fsck` against a running server's storage: whole blobs pass; a missing, cut or
/// changed one (same size) is named with its models and exits 1; leftovers are listed.
@Suite struct FsckEndToEndTests {
    struct Report: Decodable {
        struct Blob: Decodable {
            let sha256: String
            let models: [String]
            let problem: String?
        }
        let blobs: [Blob]
        let unreferenced: [String]
    }

    func fsck(_ storage: URL) async throws -> (status: Int32, report: Report?, text: String) {
        let json = try await Command.depot(["fsck", "--storage", storage.path, "--json"], environment: [:])
        let text = try await Command.depot(["fsck", "--storage", storage.path], environment: [:])
        #expect(json.status == text.status)
        return (json.status, try? json.decode(Report.self), text.text + text.error)
    }

    @Test func everyBlobIsHashedAgainAndDamageIsNamed() async throws {
        let published = try await PublishedModel(["float_classifier", "float_classifier_labels"])
        let storage = published.server.storage
        let whole = try await fsck(storage)
        #expect(whole.status == 0, "\(whole.text)")
        #expect(whole.report?.blobs.count == 2)
        #expect(whole.report?.blobs.allSatisfy { $0.problem == nil && $0.models == ["flowers"] } == true)
        #expect(whole.text.contains("2 blob(s) checked, 0 damaged, 0 unreferenced."), "\(whole.text)")

        let digests = try #require(whole.report?.blobs.map(\.sha256))
        let files = digests.map { storage.appendingPathComponent("blobs/sha256/\($0.prefix(2))/\($0)") }
        var changed = try Data(contentsOf: files[0])
        changed[changed.count / 2] ^= 0x01
        try changed.write(to: files[0])
        try FileManager.default.removeItem(at: files[1])
        let stray = String(repeating: "ab", count: 32)
        try FileManager.default.createDirectory(at: storage.appendingPathComponent("blobs/sha256/ab"), withIntermediateDirectories: true)
        try Data("left over".utf8).write(to: storage.appendingPathComponent("blobs/sha256/ab/\(stray)"))

        let damaged = try await fsck(storage)
        #expect(damaged.status == 1)
        let problems = Dictionary(uniqueKeysWithValues: (damaged.report?.blobs ?? []).map { ($0.sha256, $0.problem ?? "") })
        #expect(problems[digests[0]]?.hasPrefix("changed:") == true, "\(problems)")
        #expect(problems[digests[1]]?.hasPrefix("missing:") == true, "\(problems)")
        #expect(damaged.report?.unreferenced == [stray])
        #expect(damaged.text.contains("2 blob(s) checked, 2 damaged, 1 unreferenced."), "\(damaged.text)")
        #expect(damaged.text.contains(digests[0]) && damaged.text.contains("Restore these files from a backup"))
    }

    @Test func aDirectoryWithoutStorageIsRefused() async throws {
        let scratch = try Scratch()
        let refused = try await Command.depot(["fsck", "--storage", scratch.path("nothing-here")], environment: [:])
        #expect(refused.status == 1)
        #expect(refused.error.contains("holds no ModelDepot storage"), "\(refused.error)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("nothing-here")), "nothing was created")
    }
}
