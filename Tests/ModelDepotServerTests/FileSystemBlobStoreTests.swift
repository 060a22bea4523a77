import Crypto
import Foundation
import Hummingbird
import Testing

@testable import ModelDepotServer

/// Uploads written through staged (and, where the file system allows it, direct) writes store
/// exactly the bytes they were given and report their SHA-256, whatever their length and however
/// they arrive.
@Suite struct FileSystemBlobStoreTests {
    static let stage = FileUpload.stagingSize
    /// Lengths around the block size, the staging size, and past the writes allowed in flight
    /// (so that buffers are reused).
    static let lengths = [
        0, 1, 4095, 4096, 4097, stage - 1, stage, stage + 1,
        (FileUpload.writesInFlight + 2) * stage + 4097,
    ]

    @Test(arguments: [true, false])
    func uploadsOfEveryLengthStoreExactlyTheirBytes(directIO: Bool) async throws {
        let root = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = try FileSystemBlobStore(root: root.path, directIO: directIO)
        for (index, length) in Self.lengths.enumerated() {
            // Given bytes that differ at every position, sent in uneven pieces
            let bytes = Self.pattern(length, seed: index)
            let upload = try store.beginUpload()
            for piece in Self.pieces(of: bytes) { try await upload.write(ByteBuffer(bytes: piece)) }

            // When the upload is finished and committed under the digest it reports
            let digest = try await upload.finish()
            try await upload.commit(sha256: digest)

            // Then that is the bytes' SHA-256, the blob holds exactly those bytes and no temporary file is left
            let expected = SHA256.hash(data: bytes).hex
            #expect(digest == expected, "length \(length)")
            let stored = try Data(contentsOf: URL(fileURLWithPath: store.location(of: digest)))
            #expect(stored.count == length, "length \(length)")
            // (compared outside #expect: a failing #expect would expand megabytes of Data byte by
            // byte; the first differing offset is looked for only when they differ)
            let identical = stored == bytes
            #expect(
                identical, "length \(length): the stored bytes differ from offset \(identical ? 0 : Self.firstDifference(stored, bytes))")
            #expect(try FileManager.default.contentsOfDirectory(atPath: root.path + "/tmp").isEmpty)
            if !directIO { #expect((upload as? FileUpload)?.usesDirectIO == false) }
        }
    }

    @Test func discardWaitsForWritesInFlightAndRemovesTheTemporaryFile() async throws {
        let root = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = try FileSystemBlobStore(root: root.path)
        // Given an upload with every write slot busy and a partly filled buffer
        let upload = try store.beginUpload()
        try await upload.write(ByteBuffer(bytes: Self.pattern(FileUpload.writesInFlight * Self.stage + 100, seed: 1)))
        #expect(FileManager.default.fileExists(atPath: try #require(upload as? FileUpload).temporaryPath))

        // When it is discarded (the client went away)
        await upload.discard()

        // Then nothing is left, and nothing was stored
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path + "/tmp").isEmpty)
        #expect(store.storedDigestsNow().isEmpty)
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("depot-blobs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The offset of the first byte where `a` and `b` differ (or where the shorter one ends).
    static func firstDifference(_ a: Data, _ b: Data) -> Int {
        zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
    }

    /// `count` pseudo-random bytes (xorshift), different for each seed.
    static func pattern(_ count: Int, seed: Int) -> Data {
        var state = UInt64(seed + 1) &* 0x9E37_79B9_7F4A_7C15
        var words = [UInt64](repeating: 0, count: (count + 7) / 8)
        for index in words.indices {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            words[index] = state
        }
        return words.withUnsafeBytes { Data($0.prefix(count)) }
    }

    /// Pieces of 65,536, 7 and 1,000,003 bytes in turn, as a network might deliver them.
    static func pieces(of bytes: Data) -> [Data] {
        let sizes = [65_536, 7, 1_000_003]
        var pieces: [Data] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + sizes[pieces.count % sizes.count])
            pieces.append(bytes.subdata(in: start..<end))
            start = end
        }
        return pieces
    }
}
