import Foundation
import ModelDepotShared
import Testing

/// Every error code is one case of one enum: its wire spelling is unique snake_case, an error
/// body round-trips through JSON with its code, and a code from a newer server is `unrecognized`
/// with its message kept.
@Suite struct DepotErrorCodeTests {
    @Test func wireSpellingsAreUniqueSnakeCase() {
        let spellings = DepotError.Code.allCases.map(\.rawValue)
        #expect(Set(spellings).count == spellings.count, "a spelling is used twice")
        for spelling in spellings {
            #expect(spelling.wholeMatch(of: /[a-z][a-z0-9]*(_[a-z0-9]+)*/) != nil, "\(spelling)")
        }
    }

    @Test func anErrorRoundTripsWithItsCode() throws {
        for code in DepotError.Code.allCases {
            let error = DepotError(code, "What failed, and what to do.")
            let decoded = try JSONDecoder().decode(DepotError.self, from: JSONEncoder().encode(error))
            #expect(decoded == error)
        }
        let wire = try JSONDecoder().decode(DepotError.self, from: Data(#"{"code":"digest_mismatch","message":"m"}"#.utf8))
        #expect(wire.code == .digestMismatch)
        let newer = try JSONDecoder().decode(DepotError.self, from: Data(#"{"code":"from_the_future","message":"Do this."}"#.utf8))
        #expect(newer.code == .unrecognized && newer.message == "Do this.", "a newer server's code keeps its message")
    }
}
