import Foundation
import ModelDepotShared
import Testing

/// Batch ids are version 7 UUIDs: the time in milliseconds first, so that ids sort in time.
@Suite struct OutcomeBatchIDTests {
    @Test func idsAreVersion7UUIDsThatSortInTime() throws {
        let start = Date(timeIntervalSince1970: 1_764_064_800.5)
        let ids = (0..<200).map { OutcomeBatch.makeID(at: start.addingTimeInterval(Double($0) * 0.005)) }
        #expect(ids == ids.sorted(), "made 5 ms apart, they sort in the order they were made")
        #expect(Set(ids).count == ids.count)
        for id in ids {
            let uuid = try #require(UUID(uuidString: id), "\(id)")
            #expect(uuid.uuidString.lowercased() == id, "lower case")
            let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
            #expect(bytes[6] >> 4 == 7, "version 7: \(id)")
            #expect(bytes[8] >> 6 == 0b10, "RFC 9562 variant: \(id)")
        }
        let first = try #require(UUID(uuidString: ids[0]))
        let milliseconds = withUnsafeBytes(of: first.uuid) { $0.prefix(6).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        #expect(milliseconds == 1_764_064_800_500)
    }
}
