import Testing

@testable import ModelDepotServer

@Suite struct ByteRangeTests {
    @Test(
        arguments: [
            (nil, ByteRange.full),
            ("bytes=0-0", .partial(0...0)),
            ("bytes=0-99", .partial(0...99)),
            ("bytes=10-", .partial(10...99)),
            ("bytes=-10", .partial(90...99)),
            ("bytes=-1000", .partial(0...99)),
            ("bytes=50-5000", .partial(50...99)),
            ("bytes=100-", .unsatisfiable),
            ("bytes=-0", .unsatisfiable),
            ("bytes=5-1", .full),
            ("bytes=0-1,5-6", .full),
            ("items=0-1", .full),
            ("bytes=a-b", .full),
            ("bytes=-", .full),
            (" bytes=1-2 ", .partial(1...2)),
        ] as [(String?, ByteRange)])
    func rangeHeaderResolvesAgainstALengthOf100(header: String?, expected: ByteRange) {
        #expect(ByteRange(header: header, length: 100) == expected)
    }

    @Test func anEmptyFileSatisfiesNoRange() {
        #expect(ByteRange(header: "bytes=0-", length: 0) == .unsatisfiable)
        #expect(ByteRange(header: "bytes=-5", length: 0) == .unsatisfiable)
    }

    @Test func entityTagsCompareAsTheRFCSays() {
        #expect(EntityTag.ifNoneMatch("\"a\"", matches: "\"a\""))
        #expect(EntityTag.ifNoneMatch("W/\"a\"", matches: "\"a\""))
        #expect(EntityTag.ifNoneMatch("\"b\", \"a\"", matches: "\"a\""))
        #expect(EntityTag.ifNoneMatch("*", matches: "\"a\""))
        #expect(!EntityTag.ifNoneMatch("\"b\"", matches: "\"a\""))
        #expect(!EntityTag.ifNoneMatch(nil, matches: "\"a\""))
        #expect(EntityTag.ifRange(nil, matches: "\"a\""))
        #expect(EntityTag.ifRange("\"a\"", matches: "\"a\""))
        #expect(!EntityTag.ifRange("W/\"a\"", matches: "\"a\""))
        #expect(!EntityTag.ifRange("Sun, 22 Nov 2026 05:00:00 GMT", matches: "\"a\""))
    }
}
