import Foundation
import ModelDepotShared
import Synchronization
import Testing

/// The verifier reading pages on demand (an upload in an object store) gives exactly what it
/// gives on the whole file, fetches only the pages the structure is on, and reports a failed
/// fetch as that failure, not as a defect of the file.
@Suite struct PagedVerificationTests {
    static func paged(_ bytes: [UInt8], pageSize: Int, capacity: Int = 2) -> PagedBytes {
        PagedBytes(count: bytes.count, pageSize: pageSize, capacity: capacity) { offset, count in
            Array(bytes[offset..<(offset + count)])
        }
    }

    static func outcome(_ verify: () throws(DepotError) -> TFLiteModelDescription) -> Result<TFLiteModelDescription, DepotError> {
        Result { () throws(DepotError) in try verify() }
    }

    static var files: [URL] {
        let invalid = Repository.tfliteFixtures.appendingPathComponent("invalid")
        let defective = (try? FileManager.default.contentsOfDirectory(at: invalid, includingPropertiesForKeys: nil)) ?? []
        return ((try? Repository.fixtures()) ?? []) + defective.filter { $0.pathExtension == "tflite" }.sorted { $0.path < $1.path }
    }

    @Test(arguments: [7, 64, 4_096])
    func pagedVerificationEqualsWholeFileVerification(pageSize: Int) throws {
        #expect(Self.files.count > 25)
        for file in Self.files {
            let bytes = try Repository.bytes(of: file)
            let whole = Self.outcome { () throws(DepotError) in try TFLiteVerifier().verify(bytes) }
            let paged = Self.outcome { () throws(DepotError) in try TFLiteVerifier().verify(Self.paged(bytes, pageSize: pageSize)) }
            #expect(paged == whole, "\(file.lastPathComponent) with \(pageSize)-byte pages")
        }
    }

    @Test func onlyTheStructuresPagesAreFetched() throws {
        // 1 MiB appended after the model: no part of its structure lies there, so only the
        // last 64 KiB + 22 bytes, where a zip's end record would be, are read of it.
        var bytes = try Repository.bytes(of: Repository.fixture("float_classifier"))
        let structure = bytes.count
        let appended = [UInt8](repeating: 0xAB, count: 1 << 20)
        bytes += appended
        let pages = Self.paged(bytes, pageSize: 4_096, capacity: 4)
        _ = try TFLiteVerifier().verify(pages)
        #expect(
            pages.fetches <= (structure / 4_096 + 1) * 3 + (0xFFFF + 22) / 4_096 + 1,
            "fetched \(pages.fetches) pages of \(bytes.count / 4_096)")
    }

    @Test func aFailedFetchIsReportedAsItselfNotAsADefect() throws {
        struct StoreDown: Error {}
        let bytes = try Repository.bytes(of: Repository.fixture("int8_conv"))
        let calls = Mutex(0)
        let pages = PagedBytes(count: bytes.count, pageSize: 256, capacity: 2) { offset, count in
            let call = calls.withLock { calls in
                calls += 1
                return calls
            }
            if call == 3 { throw DepotError(.unavailable, "the object store went away") }
            return Array(bytes[offset..<(offset + count)])
        }
        let error = #expect(throws: DepotError.self) { try TFLiteVerifier().verify(pages) }
        #expect(error?.code == .unavailable)
        #expect(error?.message == "the object store went away")

        let short = PagedBytes(count: bytes.count + 100, pageSize: 1 << 20) { offset, count in
            Array(bytes[offset..<min(bytes.count, offset + count)])
        }
        let cut = #expect(throws: DepotError.self) { try TFLiteVerifier().verify(short) }
        #expect(cut?.code == .sizeMismatch, "a store returning fewer bytes than the object's size is not a defect of the model")
    }
}
