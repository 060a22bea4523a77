import ModelDepotShared
import Testing

/// The `Depot-Attributes` codec the SDK encodes with and the server decodes with.
@Suite struct DeviceAttributesTests {
    @Test func whatTheSDKEncodesTheServerDecodes() throws {
        let attributes = ["tier": "gold", "city": "München", "list": "a,b=c", "spaced key": "100% sure"]
        let header = try #require(DeviceAttributes.encode(attributes))
        #expect(header == "city=M%C3%BCnchen,list=a%2Cb%3Dc,spaced%20key=100%25%20sure,tier=gold")
        #expect(header.unicodeScalars.allSatisfy { $0.isASCII }, "a header value is ASCII")
        #expect(try DeviceAttributes.decode(header) == attributes)
        #expect(DeviceAttributes.encode([:]) == nil)
        #expect(try DeviceAttributes.decode(" tier = gold ,beta=") == ["tier": "gold", "beta": ""])
        #expect(
            try DeviceAttributes.decode("device=iphone15%2c2,city=M%C3%BCnchen, key%3D = a%3db ")
                == ["device": "iphone15,2", "city": "München", "key=": "a=b"])
    }

    /// A value near the limit, escaped throughout, decodes whole (it is decoded in one temporary
    /// buffer as long as the value).
    @Test func aLongEscapedValueDecodesWhole() throws {
        let value = String(repeating: "ü,", count: 400)
        let header = try #require(DeviceAttributes.encode(["k": value]))
        #expect(header.utf8.count > 3_500 && header.utf8.count <= DeviceAttributes.maximumLength, "\(header.utf8.count)")
        #expect(try DeviceAttributes.decode(header) == ["k": value])
        #expect(throws: DepotError.self) { try DeviceAttributes.decode(header + "%F") }
    }

    @Test func malformedOrOverlongValuesAreRefusedByName() {
        for malformed in [
            "tier", "=gold", "bad=%zz", "cut=%4", "notUTF8=%FF%FE", "cut4=%F0%9F%98", "cut4a=%F0%9F%98a", "lone=%80", "ok=1,,tier",
            "ok=1, =x",
        ] {
            let error = #expect(throws: DepotError.self, "\(malformed)") { try DeviceAttributes.decode(malformed) }
            #expect(error?.code == .badRequest, "\(malformed)")
            // The server's check without decoding refuses the same values with the same words.
            let checked = #expect(throws: DepotError.self, "\(malformed)") { try DeviceAttributes.check(malformed) }
            #expect(checked?.message == error?.message, "\(malformed)")
        }
        let overlong = String(repeating: "a=b,", count: 1025)
        let decoded = #expect(throws: DepotError.self) { try DeviceAttributes.decode(overlong) }
        let checked = #expect(throws: DepotError.self) { try DeviceAttributes.check(overlong) }
        for error in [decoded, checked] {
            #expect(error?.code == .badRequest)
            #expect(error?.message == "Depot-Attributes is 4100 bytes long; at most 4096 are accepted.")
        }
    }

    @Test func theCheckPassesWhatDecodes() throws {
        let header = try #require(DeviceAttributes.encode(["city": "München", "list": "a,b=c", "k": String(repeating: "ü,", count: 400)]))
        for valid in [header, " tier = gold ,beta=", "device=iphone15%2c2", ",,a=b,", "", "smile=%F0%9F%98%80", "fffd=%EF%BF%BD"] {
            _ = try DeviceAttributes.decode(valid)
            try DeviceAttributes.check(valid)
        }
        #expect(try DeviceAttributes.decode("smile=%F0%9F%98%80,fffd=%EF%BF%BD") == ["smile": "😀", "fffd": "\u{FFFD}"])
    }
}
