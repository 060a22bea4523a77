import Foundation
import ModelDepotShared
import TestSupport
import Testing

/// The zip of associated files may not make the verifier inflate more than it allows: entries
/// that share bytes or are listed out of order are refused, and what all entries inflate to
/// together is counted against ``TFLiteVerificationPolicy/maximumAssociatedFilesSize``.
@Suite struct ZipBudgetTests {
    /// A model with no zip of its own, followed by `zip`.
    static func model(followedBy zip: [UInt8]) throws -> [UInt8] {
        try Repository.bytes(of: Repository.fixture("float_classifier")) + zip
    }

    static let labels = TestZip.Entry.stored("labels.txt", Array("daisy\nrose\ntulip\n".utf8))
    static let readme = TestZip.Entry.stored("README.txt", Array("A classifier.\n".utf8))

    @Test func entriesListedInTheOrderTheyLieAreRead() throws {
        // Given two entries one after the other, listed in that order
        let bytes = try Self.model(followedBy: TestZip.archive([Self.labels, Self.readme]))
        // When verified, then both are read
        #expect(try TFLiteVerifier().verify(bytes).packedFiles?.map(\.name) == ["labels.txt", "README.txt"])
    }

    @Test func anEntryInsideAnotherEntrysDataIsRefused() throws {
        // Given README.txt's local header and data inside the data of labels.txt (the overlap a
        // zip bomb uses to inflate one block many times)
        let outer = TestZip.Entry.stored("labels.txt", TestZip.record(Self.readme))
        let inner = 30 + outer.name.utf8.count
        let zip = TestZip.archive(TestZip.record(outer), directory: [(outer, 0), (Self.readme, inner)])
        // When verified
        let error = try #require(failure(of: try Self.model(followedBy: zip)))
        // Then the overlap is named
        #expect(error.code == .invalidAssociatedFiles)
        #expect(error.message.contains("'README.txt' starts at offset"), "\(error.message)")
        #expect(error.message.contains("inside or before 'labels.txt'"), "\(error.message)")
    }

    @Test func entriesListedOutOfOrderAreRefused() throws {
        // Given labels.txt then README.txt in the file, listed README.txt first
        let first = TestZip.record(Self.labels)
        let zip = TestZip.archive(first + TestZip.record(Self.readme), directory: [(Self.readme, first.count), (Self.labels, 0)])
        // When verified
        let error = try #require(failure(of: try Self.model(followedBy: zip)))
        // Then the order is named
        #expect(error.code == .invalidAssociatedFiles)
        #expect(error.message.contains("'labels.txt' starts at offset"), "\(error.message)")
    }

    @Test func aZipBombOverTheLimitIsRefusedWhileInflating() throws {
        // Given 4 MiB of zeros deflated into a few KiB, and a limit of 1 MiB
        let bomb = TestZip.Entry.run("bomb.txt", of: 0x30, count: 4 << 20)
        #expect(bomb.data.count < 32 << 10)
        let bytes = try Self.model(followedBy: TestZip.archive([bomb]))
        // When verified under the limit, then it is refused with its own code
        let error = try #require(failure(of: bytes, policy: TFLiteVerificationPolicy(maximumAssociatedFilesSize: 1 << 20)))
        #expect(error.code == .associatedFilesTooLarge)
        #expect(error.message.contains("more than the 1048576 bytes accepted"), "\(error.message)")
        #expect(error.message.contains("'bomb.txt' (4194304 bytes by its header)"), "\(error.message)")
        // And with a limit it fits, the same file is accepted
        #expect(failure(of: bytes, policy: TFLiteVerificationPolicy(maximumAssociatedFilesSize: 4 << 20)) == nil)
    }

    @Test func theLimitCountsAllEntriesTogether() throws {
        // Given three files of 512 KiB each and a limit of 1 MiB: each fits, all three do not
        let parts = (0..<3).map { TestZip.Entry.run("part\($0).txt", of: 0x30, count: 512 << 10) }
        let bytes = try Self.model(followedBy: TestZip.archive(parts))
        // When verified
        let error = try #require(failure(of: bytes, policy: TFLiteVerificationPolicy(maximumAssociatedFilesSize: 1 << 20)))
        // Then the third is the one refused, with nothing left of the limit
        #expect(error.code == .associatedFilesTooLarge)
        #expect(error.message.contains("'part2.txt' (524288 bytes by its header) goes past the 0 bytes"), "\(error.message)")
    }

    @Test func storedFilesCountAgainstTheLimitToo() throws {
        let bytes = try Self.model(followedBy: TestZip.archive([Self.labels, Self.readme]))
        let total = Self.labels.size + Self.readme.size
        #expect(failure(of: bytes, policy: TFLiteVerificationPolicy(maximumAssociatedFilesSize: total)) == nil)
        let error = try #require(failure(of: bytes, policy: TFLiteVerificationPolicy(maximumAssociatedFilesSize: total - 1)))
        #expect(error.code == .associatedFilesTooLarge)
        #expect(error.message.contains("'README.txt'"), "\(error.message)")
    }

    @Test func realLabelFilesWithinTheLimitAreAccepted() throws {
        // Given a model packed by tflite-support's MetadataPopulator with deflated label files
        let bytes = try Repository.bytes(of: Repository.metadataFixtures.appendingPathComponent("described_classifier.tflite"))
        let packed = try #require(try TFLiteVerifier().verify(bytes).packedFiles)
        let total = packed.map(\.size).reduce(0, +)
        // Then the default limit is 256 MiB, and a limit of exactly their size accepts them
        #expect(TFLiteVerificationPolicy.default.maximumAssociatedFilesSize == 256 << 20)
        let described = try TFLiteVerifier(policy: TFLiteVerificationPolicy(maximumAssociatedFilesSize: total)).verify(bytes)
        #expect(described.labelFiles.first?.labels == ["daisy", "rose", "", "tulip\r"])
        // While one byte less refuses them
        let error = try #require(failure(of: bytes, policy: TFLiteVerificationPolicy(maximumAssociatedFilesSize: total - 1)))
        #expect(error.code == .associatedFilesTooLarge)
    }
}
