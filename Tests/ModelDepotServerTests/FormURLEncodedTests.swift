import Testing

@testable import ModelDepotServer

/// `application/x-www-form-urlencoded` as the WHATWG URL standard parses it.
@Suite struct FormURLEncodedTests {
    static func pairs(_ body: String) -> [String] {
        FormURLEncoded.pairs(Array(body.utf8)).map { "\($0.name)=\($0.value)" }
    }

    @Test func piecesSplitAtAmpersandsAndTheFirstEqualsSign() {
        #expect(Self.pairs("a=1&b=2=3&&c&=d&") == ["a=1", "b=2=3", "c=", "=d"])
        #expect(Self.pairs("").isEmpty)
    }

    @Test func plusIsASpaceAndPercentEscapesAreBytes() {
        #expect(Self.pairs("t=a+b%20c%2Bd") == ["t=a b c+d"])
        #expect(Self.pairs("na%6De=%C3%A9t%c3%a9") == ["name=été"])
    }

    @Test func strayPercentSignsAndRawBytesStayAsTheyAre() {
        #expect(Self.pairs("t=%") == ["t=%"])
        #expect(Self.pairs("t=%4") == ["t=%4"])
        #expect(Self.pairs("t=%zz%4g100%") == ["t=%zz%4g100%"])
        #expect(Self.pairs("t=a b<>\u{0}") == ["t=a b<>\u{0}"])
    }

    @Test func bytesThatAreNotUTF8BecomeReplacementCharacters() {
        #expect(Self.pairs("t=%FF%C3") == ["t=\u{FFFD}\u{FFFD}"])
        #expect(FormURLEncoded.pairs([0x74, 0x3D, 0xFF]).first?.value == "\u{FFFD}")
    }
}
