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
        for malformed in ["tier", "=gold", "bad=%zz", "cut=%4", "notUTF8=%FF%FE"] {
            let error = #expect(throws: DepotError.self, "\(malformed)") { try DeviceAttributes.decode(malformed) }
            #expect(error?.code == .badRequest, "\(malformed)")
        }
        do {
            _ = try DeviceAttributes.decode(String(repeating: "a=b,", count: 1025))
            Issue.record("an overlong value was accepted")
        } catch {
            #expect(error.code == .badRequest)
            #expect(error.message == "Depot-Attributes is 4100 bytes long; at most 4096 are accepted.")
        }
    }
}
